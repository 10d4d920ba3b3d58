"""Mutants of a reference: every single-change edit the operators propose, as source.

Each mutant has a stable id, `QUALNAME/PATH:OPERATOR`, with `#2`, `#3` for the second and third
edit of that operator in the same statement (in the order `ast.walk` meets them):
`RMSNorm.forward/3:drop-cast` is the first `drop-cast` in the fourth statement of
`RMSNorm.forward`, `rope/2.0:int+1#2` the second `int+1` in the first statement of the body of
its third. `QUALNAME/PATH` is the place of judge.authoring.mutation.places (`<module>` at top
level, `f/def` for the `def` line of `f`, docstrings not counted). Comments, blank lines,
docstrings and edits of other functions or other statements keep an id; a statement added or
removed before it in the same body renumbers it. Declared equivalents in problem.toml name
mutants by id; each mutant also keeps the line and column it was made at, for messages
("line 7: x.float() → x").

Not mutated: docstrings, annotations, f-strings and the messages of `raise`, `assert`
statements and `from __future__` imports: changing them changes no behaviour a case can see.

Two groups of operators (judge.authoring.mutation.operators): the single-change ones, which `judge
validate` enforces, and the state ones of issue 28 (a value memoised across calls, an argument
replaced by its default, `.view` for `.reshape`, batch row 0 for every row, a result cached by
shape), which it enforces only once `NEW_OPERATORS_ENFORCED` is set. `generate_state` gives
those alone, for reports. Each group runs over the whole module in turn, so adding a group never
changes the ids or the mutants of the groups before it.
"""

from __future__ import annotations

import ast
import copy
import warnings
from dataclasses import dataclass

from judge.authoring.mutation.operators import (
    OPERATORS,
    STATE_CAP,
    STATE_OPERATORS,
    Edit,
    Operator,
    Site,
    enforced_groups,
)
from judge.authoring.mutation.places import MODULE, places

MAX_CHANGE = 120


@dataclass(frozen=True)
class Mutant:
    id: str  # "RMSNorm.forward/3:drop-cast#2": place, operator, and `#number` past the first
    line: int
    col: int
    operator: str
    change: str  # "xf.pow(2).mean(dim=-1, keepdim=True) -> xf.pow(2).mean(dim=-2, keepdim=True)"
    source: str
    place: str = f"{MODULE}/0"  # "RMSNorm.forward/3": the function (or class) and statement path
    # Among the mutants of this operator made in this place, which one (1 for the first).
    number: int = 1

    @property
    def function(self) -> str:
        """The qualified name of the function (or class) it was made in, `<module>` at top level."""
        return self.place.rsplit("/", 1)[0]


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


def _functions(tree: ast.Module) -> dict[int, ast.FunctionDef | ast.AsyncFunctionDef]:
    """For each node inside a function (its arguments included), the innermost such function."""
    out: dict[int, ast.FunctionDef | ast.AsyncFunctionDef] = {}
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for node in ast.walk(fn):
                if node is not fn:
                    out[id(node)] = fn  # an inner function's walk comes later and wins
    return out


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_CHANGE else text[: MAX_CHANGE - 1] + "…"


def _describe(node: ast.AST, edit: Edit) -> str:
    if edit.change is not None:
        return _short(edit.change)
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


def _capped(mutants: list[Mutant]) -> list[Mutant]:
    """At most STATE_CAP mutants of each operator: an evenly spaced sample in source order (the
    same reference gives the same sample)."""
    keep: set[str] = set()
    for name in {m.operator for m in mutants}:
        mine = [m for m in mutants if m.operator == name]  # in walk order: sort by place
        mine.sort(key=lambda m: (m.line, m.col, m.number))
        step = max(1.0, len(mine) / STATE_CAP)
        keep.update(mine[int(i * step)].id for i in range(min(STATE_CAP, len(mine))))
    return [m for m in mutants if m.id in keep]


def _add_prelude(tree: ast.Module, prelude: tuple[ast.stmt, ...]) -> None:
    """Module-level statements an edit needs (a cache dict), after the docstring and imports."""
    at = 0
    for i, stmt in enumerate(tree.body):
        docstring = i == 0 and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
        if docstring or isinstance(stmt, (ast.Import, ast.ImportFrom)):
            at = i + 1
        else:
            break
    tree.body[at:at] = [copy.deepcopy(s) for s in prelude]


def generate(source: str, state: bool | None = None) -> list[Mutant]:
    """Every mutant of `source`, in source order; none equal to the original or to another.
    `state` adds the state operators' mutants (by default, only when they are enforced)."""
    groups = enforced_groups() if state is None else [OPERATORS, STATE_OPERATORS] if state else [OPERATORS]
    return _generate(source, groups)


def generate_state(source: str) -> list[Mutant]:
    """The state operators' mutants alone (issue 28): what `generate(source, state=True)` adds."""
    return _generate(source, [OPERATORS, STATE_OPERATORS], first=1)


def _generate(source: str, groups: list[list[Operator]], first: int = 0) -> list[Mutant]:
    """The mutants of groups[first:]; the groups before only claim the programs they make."""
    tree = ast.parse(source)
    original = ast.unparse(tree)
    skip = _skipped(tree)
    parents = {id(child): node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    params = _parameters(tree)
    functions = _functions(tree)
    indices = {id(node): i for i, node in enumerate(ast.walk(tree))}
    where = places(tree)
    seen = {original}
    taken: dict[str, int] = {}
    mutants: list[Mutant] = []
    for number, group in enumerate(groups):
        made: list[Mutant] = []
        for index, node in enumerate(ast.walk(tree)):
            line, col = getattr(node, "lineno", None), getattr(node, "col_offset", None)
            if id(node) in skip or line is None or col is None:
                continue
            key = id(node)
            site = Site(parents.get(key), params.get(key, frozenset()), functions.get(key), tree, parents)
            for operator in group:
                for edit in operator(node, site):
                    copied = copy.deepcopy(tree)
                    at = index if edit.target is None else indices[id(edit.target)]
                    _replace(copied, at, edit.replacement)
                    _add_prelude(copied, edit.prelude)
                    try:
                        mutated = ast.unparse(ast.fix_missing_locations(copied))
                        with warnings.catch_warnings():
                            # A state mutant that warns (`None[0]`, `(1, 2) is None`) is refused:
                            # a runner with warnings as errors could not load it. The first group
                            # keeps its mutants as they always were.
                            warnings.simplefilter("error" if number else "ignore", SyntaxWarning)
                            compile(mutated, "mutant.py", "exec")
                    except (SyntaxError, SyntaxWarning, ValueError, TypeError):
                        continue  # an edit that makes no valid program is no mistake a learner makes
                    if mutated in seen:
                        continue
                    seen.add(mutated)
                    place = where.get(key, f"{MODULE}/?")
                    base = f"{place}:{edit.operator}"
                    taken[base] = taken.get(base, 0) + 1
                    mutant_id = base if taken[base] == 1 else f"{base}#{taken[base]}"
                    change = _describe(node, edit)
                    made.append(
                        Mutant(mutant_id, line, col, edit.operator, change, mutated, place, taken[base])
                    )
        if group is STATE_OPERATORS:
            made = _capped(made)
        if number >= first:
            mutants.extend(made)
    # Source order; the same spot's mutants by operator, then in the order they were made.
    mutants.sort(key=lambda m: (m.line, m.col, m.operator, m.number))
    return mutants
