"""Mutants of a reference: every single-change edit the operators propose, as source.

Each mutant has a stable id, `line:column:operator` (with `#2`, `#3` when one spot takes
the same operator twice), and a one-line description of its change. Ids stay the same as
long as the reference does; declared equivalents in problem.toml name them.

Not mutated: docstrings, annotations, f-strings and the messages of `raise`, `assert`
statements and `from __future__` imports: changing them changes no behaviour a case can see.
"""

from __future__ import annotations

import ast
import copy
from dataclasses import dataclass

from judge.mutation.operators import OPERATORS, Edit, Site

MAX_CHANGE = 120


@dataclass(frozen=True)
class Mutant:
    id: str
    line: int
    col: int
    operator: str
    change: str  # "xf.pow(2).mean(dim=-1, keepdim=True) -> xf.pow(2).mean(dim=-2, keepdim=True)"
    source: str


def _skipped(tree: ast.Module) -> set[int]:
    """ids of nodes whose subtrees are never mutated."""
    skip: set[int] = set()

    def all_of(node: ast.AST | None) -> None:
        if node is not None:
            skip.update(id(n) for n in ast.walk(node))

    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (
            isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            and isinstance(body, list)
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            all_of(body[0])
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            all_of(node.returns)
            for arg in [*node.args.args, *node.args.kwonlyargs, *node.args.posonlyargs]:
                all_of(arg.annotation)
        if isinstance(node, ast.AnnAssign):
            all_of(node.annotation)
        if isinstance(node, (ast.JoinedStr, ast.Assert, ast.ImportFrom, ast.Import, ast.Raise)):
            all_of(node)
    return skip


def _parameters(tree: ast.Module) -> dict[int, frozenset[str]]:
    """For each node inside a function, the names of that function's parameters."""
    out: dict[int, frozenset[str]] = {}
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            a = fn.args
            names = frozenset(
                x.arg for x in [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg] if x is not None
            )
            for node in ast.walk(fn):
                out[id(node)] = names  # an inner function's walk comes later and wins
    return out


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_CHANGE else text[: MAX_CHANGE - 1] + "…"


def _describe(node: ast.AST, edit: Edit) -> str:
    before = ast.unparse(node)
    if isinstance(edit.replacement, list):
        if all(isinstance(s, ast.Pass) for s in edit.replacement):
            return _short(f"removed `{before}`")
        after = "; ".join(ast.unparse(s) for s in edit.replacement)
        return _short(f"`{before.splitlines()[0]}` removed around `{after}`")
    return _short(f"{before} → {ast.unparse(edit.replacement)}")


def _replace(tree: ast.Module, index: int, replacement: ast.AST | list[ast.stmt]) -> None:
    """Put `replacement` where the index-th node of `ast.walk(tree)` is."""
    target = next(n for i, n in enumerate(ast.walk(tree)) if i == index)
    for parent in ast.walk(tree):
        for field, value in ast.iter_fields(parent):
            if value is target:
                setattr(parent, field, replacement)
                return
            if isinstance(value, list) and any(v is target for v in value):
                at = next(i for i, v in enumerate(value) if v is target)
                value[at : at + 1] = replacement if isinstance(replacement, list) else [replacement]
                return
    raise ValueError("mutation target not found")


def generate(source: str) -> list[Mutant]:
    """Every mutant of `source`, in source order; none equal to the original or to another."""
    tree = ast.parse(source)
    original = ast.unparse(tree)
    skip = _skipped(tree)
    parents = {id(child): node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    params = _parameters(tree)
    seen = {original}
    taken: dict[str, int] = {}
    mutants: list[Mutant] = []
    for index, node in enumerate(ast.walk(tree)):
        line, col = getattr(node, "lineno", None), getattr(node, "col_offset", None)
        if id(node) in skip or line is None or col is None:
            continue
        site = Site(parents.get(id(node)), params.get(id(node), frozenset()))
        for operator in OPERATORS:
            for edit in operator(node, site):
                copied = copy.deepcopy(tree)
                _replace(copied, index, edit.replacement)
                try:
                    mutated = ast.unparse(ast.fix_missing_locations(copied))
                    compile(mutated, "mutant.py", "exec")
                except (SyntaxError, ValueError, TypeError):
                    continue  # an edit that makes no valid program is no mistake a learner makes
                if mutated in seen:
                    continue
                seen.add(mutated)
                base = f"{line}:{col}:{edit.operator}"
                taken[base] = taken.get(base, 0) + 1
                mutant_id = base if taken[base] == 1 else f"{base}#{taken[base]}"
                change = _describe(node, edit)
                mutants.append(Mutant(mutant_id, line, col, edit.operator, change, mutated))
    mutants.sort(key=lambda m: (m.line, m.col, m.id))
    return mutants
