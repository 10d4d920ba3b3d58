"""No case returns a fact it computed in the learner's process (the rule is above
`_FactFinder`): found statically, by following what each case returns back through cases.py."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, field

from judge.authoring.package import Problem
from judge.authoring.validation.diagnostics import Diagnostics


def check_facts(out: Diagnostics, problem: Problem) -> None:
    """No case returns a value it derived from the learner's objects by a comparison, a
    predicate or a statistic read back (the rule is above `_FactFinder`): the judge must
    compute such facts from the observed data, with its checkers."""
    try:
        found = facts_in_cases(problem.read("cases.py"))
    except SyntaxError as exc:  # the cases loaded, so this cannot happen; say so if it does
        out.error("facts", f"cases.py could not be read: {exc}")
        return
    refused: dict[tuple[int, str, str], list[str]] = {}
    for name, facts in found.items():
        for fact in facts:
            refused.setdefault((fact.line, fact.code, fact.why), []).append(name)
    if not refused:
        out.note("facts", "every case returns data; no fact is computed in the learner's process")
        return
    lines = [
        f"line {line}: {why}: `{code}` (case {', '.join(names)})"
        for (line, code, why), names in sorted(refused.items())
    ]
    out.error(
        "facts",
        "cases compute facts in the learner's process, where a patched torch or a module that looks "
        "at its caller decides what they say: return the tensors and let a checker compare them "
        "(exact or allclose with the reference's, distribution() for random values, facts() for "
        "yes-or-no properties; docs/authoring.md)\n" + "\n".join(lines),
    )


# A case runs in the learner's process, where a patched torch or a module that looks at its
# caller can make any computation answer as it likes (docs/architecture.md, "Forbidden APIs"):
# a case returns data, and the judge computes facts about it with its checkers. So a case may
# not return a value it derives from the learner's objects by a comparison (`==`, `<`, `is`,
# `in`, ... where a side reads an attribute or calls a method: a tensor, a module, an answer)
# or `not`; by a predicate (`all`, `any`, `isinstance`, `hasattr`, `callable`, `torch.equal`,
# `torch.allclose`, ...) or `bool(...)`; by reading a tensor's value back (`.item()`,
# `.tolist()`, `.data_ptr()`, ...); or by `int`, `float`, `round`, `abs`, `len`, `sum`, `min` or
# `max` of something that calls or compares. Found statically: what a case returns is followed
# back through its local names, the dicts and lists it filled and the helpers of cases.py it
# called. Reading a value as it is (`int(cache.length)`, a shape, a constant, the number of
# tensors an answer holds) is not derived, nor is a helper's constant (`True` after a call,
# `False` in its `except`), `outcome(...)`'s string, or a test of two plain names
# (`p in message`).
_PREDICATES = frozenset({"all", "any", "isinstance", "issubclass", "hasattr", "callable"})
_CONVERSIONS = frozenset({"int", "float", "complex", "round", "abs", "len", "sum", "min", "max"})
_TORCH_PREDICATES = frozenset(
    {"equal", "allclose", "is_tensor", "is_floating_point", "is_complex", "is_nonzero", "is_same_size"}
)
_READ_BACK = frozenset(
    {"item", "tolist", "equal", "allclose", "data_ptr", "is_contiguous", "is_set_to", "storage_offset"}
)
# Calls whose result holds what their arguments hold, and methods that put values in a container.
_CONTAINERS = frozenset({"dict", "list", "tuple", "set", "frozenset", "sorted", "reversed"})
_FILLERS = frozenset({"update", "append", "extend", "add", "insert", "setdefault"})
_MAX_DEPTH = 24


@dataclass
class _Scope:
    """A function's local names: what each was assigned (with the element taken from a tuple it
    was unpacked from), what was put into it, and the functions defined inside it."""

    parent: _Scope | None
    assigned: dict[str, list[tuple[ast.expr, int | None]]] = field(default_factory=dict)
    filled: dict[str, list[ast.expr]] = field(default_factory=dict)
    helpers: dict[str, ast.FunctionDef] = field(default_factory=dict)


@dataclass(frozen=True)
class _Fact:
    line: int
    code: str
    why: str


def _own_nodes(fn: ast.FunctionDef) -> Iterator[ast.AST]:
    """The nodes of a function's body, without those of the functions and lambdas inside it."""
    stack: list[ast.AST] = list(reversed(fn.body))
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        stack.extend(reversed(list(ast.iter_child_nodes(node))))


class _FactFinder:
    """Follows what a case returns back to the expressions that made it (through local names,
    the dicts and lists it filled, and the helpers of cases.py it called) and names the ones
    that derive a plain value from the learner's objects."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.tree = ast.parse(source)
        helpers = {n.name: n for n in self.tree.body if isinstance(n, ast.FunctionDef)}
        self.module = _Scope(None, helpers=helpers)
        self._scopes: dict[int, _Scope] = {}

    def cases(self) -> Iterator[ast.FunctionDef]:
        for node in self.tree.body:
            if isinstance(node, ast.FunctionDef) and any(_is_case_decorator(d) for d in node.decorator_list):
                yield node

    def facts(self, fn: ast.FunctionDef) -> list[_Fact]:
        found: dict[tuple[int, int], _Fact] = {}
        scope = self.scope(fn, self.module)
        for value in self.returns(fn):
            for leaf, where in self.leaves(value, scope, set(), 0):
                why = self.derived(leaf, where, 0)
                if why is not None:
                    code = ast.get_source_segment(self.source, leaf) or ast.unparse(leaf)
                    code = " ".join(code.split())
                    code = code if len(code) <= 90 else code[:87] + "..."
                    found[(leaf.lineno, leaf.col_offset)] = _Fact(leaf.lineno, code, why)
        return [found[k] for k in sorted(found)]

    def scope(self, fn: ast.FunctionDef, parent: _Scope) -> _Scope:
        known = self._scopes.get(id(fn))
        if known is not None:
            return known
        scope = _Scope(parent)
        self._scopes[id(fn)] = scope
        for node in _own_nodes(fn):
            if isinstance(node, ast.FunctionDef) and node is not fn:
                scope.helpers[node.name] = node
            elif isinstance(node, ast.Assign):
                for target in node.targets:
                    self._bind(scope, target, node.value)
            elif isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.NamedExpr)) and node.value is not None:
                self._bind(scope, node.target, node.value)
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in _FILLERS
                and isinstance(node.func.value, ast.Name)
            ):
                put = [*node.args, *(k.value for k in node.keywords)]
                scope.filled.setdefault(node.func.value.id, []).extend(put)
        return scope

    @staticmethod
    def _bind(scope: _Scope, target: ast.expr, value: ast.expr) -> None:
        if isinstance(target, ast.Name):
            scope.assigned.setdefault(target.id, []).append((value, None))
        elif isinstance(target, (ast.Tuple, ast.List)):
            for i, elt in enumerate(target.elts):
                if isinstance(elt, ast.Name):
                    scope.assigned.setdefault(elt.id, []).append((value, i))
        elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
            scope.filled.setdefault(target.value.id, []).append(value)

    @staticmethod
    def returns(fn: ast.FunctionDef) -> list[ast.expr]:
        return [n.value for n in _own_nodes(fn) if isinstance(n, ast.Return) and n.value is not None]

    def helper(self, scope: _Scope, func: ast.expr) -> tuple[ast.FunctionDef, _Scope] | None:
        if not isinstance(func, ast.Name):
            return None
        s: _Scope | None = scope
        while s is not None:
            if func.id in s.helpers:
                fn = s.helpers[func.id]
                return fn, self.scope(fn, s)
            s = s.parent
        return None

    def leaves(
        self, expr: ast.expr, scope: _Scope, seen: set[int], depth: int
    ) -> Iterator[tuple[ast.expr, _Scope]]:
        """The expressions whose values end up as leaves of `expr`'s value."""
        if depth > _MAX_DEPTH or id(expr) in seen:
            return
        seen = seen | {id(expr)}
        step = depth + 1
        if isinstance(expr, ast.Dict):
            for value in expr.values:
                yield from self.leaves(value, scope, seen, step)
        elif isinstance(expr, (ast.List, ast.Tuple, ast.Set)):
            for elt in expr.elts:
                yield from self.leaves(elt.value if isinstance(elt, ast.Starred) else elt, scope, seen, step)
        elif isinstance(expr, (ast.ListComp, ast.SetComp, ast.GeneratorExp)):
            yield from self.leaves(expr.elt, scope, seen, step)
        elif isinstance(expr, ast.DictComp):
            yield from self.leaves(expr.value, scope, seen, step)
        elif isinstance(expr, ast.IfExp):
            yield from self.leaves(expr.body, scope, seen, step)
            yield from self.leaves(expr.orelse, scope, seen, step)
        elif isinstance(expr, ast.Name) and (expr.id in scope.assigned or expr.id in scope.filled):
            for value, index in scope.assigned.get(expr.id, []):
                for part, where in self._element(value, index, scope):
                    yield from self.leaves(part, where, seen, step)
            for value in scope.filled.get(expr.id, []):
                yield from self.leaves(value, scope, seen, step)
        elif isinstance(expr, ast.Call) and (found := self.helper(scope, expr.func)) is not None:
            fn, inner = found
            for value in self.returns(fn):
                yield from self.leaves(value, inner, seen, step)
        elif isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id in _CONTAINERS:
            for arg in [*expr.args, *(k.value for k in expr.keywords)]:
                yield from self.leaves(arg, scope, seen, step)
        else:
            yield expr, scope

    def _element(self, value: ast.expr, index: int | None, scope: _Scope) -> list[tuple[ast.expr, _Scope]]:
        """What a name unpacked as element `index` of `value` holds (all of `value` when whole)."""
        if index is None:
            return [(value, scope)]
        if isinstance(value, (ast.Tuple, ast.List)) and index < len(value.elts):
            return [(value.elts[index], scope)]
        found = self.helper(scope, value.func) if isinstance(value, ast.Call) else None
        if found is None:
            return []  # a tuple some other call returned (the learner's outputs): data
        fn, inner = found
        return [
            (r.elts[index], inner)
            for r in self.returns(fn)
            if isinstance(r, (ast.Tuple, ast.List)) and index < len(r.elts)
        ]

    def derived(self, expr: ast.expr, scope: _Scope, depth: int) -> str | None:
        """Why `expr` is a plain value derived from the learner's objects, or None."""
        if depth > _MAX_DEPTH:
            return None
        if isinstance(expr, ast.Compare):
            operands = [expr.left, *expr.comparators]
            if any(self._reads_objects(o, scope, depth + 1) for o in operands):
                return "a comparison"
            return None
        if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Not):
            return "`not`"
        if isinstance(expr, (ast.BoolOp, ast.BinOp, ast.UnaryOp)):
            parts = (
                expr.values
                if isinstance(expr, ast.BoolOp)
                else ([expr.left, expr.right] if isinstance(expr, ast.BinOp) else [expr.operand])
            )
            for part in parts:
                for leaf, where in self.leaves(part, scope, set(), depth + 1):
                    why = self.derived(leaf, where, depth + 1)
                    if why is not None:
                        return why
            return None
        if not isinstance(expr, ast.Call):
            return None
        func = expr.func
        if isinstance(func, ast.Name):
            if func.id == "bool" and expr.args and not isinstance(expr.args[0], ast.Constant):
                return "`bool(...)`"
            if func.id in _PREDICATES:
                return f"`{func.id}(...)`"
            if func.id in _CONVERSIONS and expr.args and self._computes(expr.args[0], scope, depth + 1):
                return f"`{func.id}(...)` of a computed value"
        elif isinstance(func, ast.Attribute):
            on_torch = isinstance(func.value, ast.Name) and func.value.id == "torch"
            if on_torch and func.attr in _TORCH_PREDICATES:
                return f"`torch.{func.attr}(...)`"
            if func.attr in _READ_BACK:
                return f"`.{func.attr}()`"
        return None

    def _computes(self, expr: ast.expr, scope: _Scope, depth: int) -> bool:
        """Whether `expr` calls or compares, following a local name to what it was assigned
        whole (a name unpacked from a call's result holds part of an answer, as it came)."""
        if depth > _MAX_DEPTH:
            return False
        if isinstance(expr, ast.Name):
            return any(
                self._computes(value, scope, depth + 1)
                for value, index in scope.assigned.get(expr.id, [])
                if index is None
            )
        return any(isinstance(n, (ast.Call, ast.Compare)) for n in ast.walk(expr))

    def _reads_objects(self, expr: ast.expr, scope: _Scope, depth: int) -> bool:
        """Whether `expr` reads an attribute or calls a method or a torch function: it looks into
        a tensor, a module or the learner's result (`p in message` of two plain names does not),
        following a local name to what it was assigned whole."""
        if depth > _MAX_DEPTH:
            return False
        if isinstance(expr, ast.Name):
            return any(
                self._reads_objects(value, scope, depth + 1)
                for value, index in scope.assigned.get(expr.id, [])
                if index is None
            )
        for node in ast.walk(expr):
            if isinstance(node, (ast.Attribute, ast.Subscript)):
                return True
            if isinstance(node, ast.Call) and not isinstance(node.func, ast.Name):
                return True
            if isinstance(node, ast.Name) and self._reads_objects(node, scope, depth + 1):
                return True
        return False


def _is_case_decorator(node: ast.expr) -> bool:
    func = node.func if isinstance(node, ast.Call) else node
    return (isinstance(func, ast.Name) and func.id == "case") or (
        isinstance(func, ast.Attribute) and func.attr == "case"
    )


def facts_in_cases(source: str) -> dict[str, list[_Fact]]:
    """Per case of a cases.py, the values it returns that it derived from the learner's objects."""
    finder = _FactFinder(source)
    found = {fn.name: finder.facts(fn) for fn in finder.cases()}
    return {name: facts for name, facts in found.items() if facts}
