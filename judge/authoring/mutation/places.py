"""Where a node sits in the syntax tree, as the stable part of a mutant's id.

A place is `QUALNAME/PATH`: the qualified name of the innermost function or class around the
node (`RMSNorm.forward`, `rope.inner`, `<module>` at top level), then the path of the innermost
statement that holds it inside that function's body. A path is the statement's index in its
body, dot-joined with the indices of the bodies around it: `3` is the fourth statement, `3.1`
the second statement of its body, `3.else0` the first of its `else:`, `3.except0.2` and
`3.finally0` those of a `try`, `3.case1.0` those of a `match`. A docstring is not counted, so
adding or removing one moves nothing. The header of a function or class (the `def` line itself:
decorators, parameters, their defaults and annotations, bases) is `QUALNAME/def`.

Nothing here reads line numbers, so comments, blank lines, docstrings and edits of other
functions or of later statements leave a place as it is; only a statement added or removed
before it in the same body (or one of the bodies around it) renumbers it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

MODULE = "<module>"
HEADER = "def"
# The label of each field that holds a body of statements (`body` is the plain index).
BODY_LABELS = {"body": "", "orelse": "else", "finalbody": "finally"}
# Fields whose elements each hold a body: `except` handlers of a try, cases of a match.
CLAUSE_LABELS = {"handlers": "except", "cases": "case"}

Definition = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef


def places(tree: ast.Module) -> dict[int, str]:
    """For each node of `tree` (by id) that sits in a statement, its place `QUALNAME/PATH`."""
    out: dict[int, str] = {}
    _body(tree.body, MODULE, "", out, docstring=True)
    return out


def _mark(nodes: Iterable[ast.AST], place: str, out: dict[int, str]) -> None:
    for node in nodes:
        for inner in ast.walk(node):
            out[id(inner)] = place


def _body(
    stmts: list[ast.stmt], qualname: str, prefix: str, out: dict[int, str], docstring: bool = False
) -> None:
    first = 0
    if docstring and stmts and _is_docstring(stmts[0]):
        _mark([stmts[0]], f"{qualname}/{prefix}doc", out)  # never mutated; named for completeness
        first = 1
    for index, stmt in enumerate(stmts[first:]):
        _statement(stmt, qualname, f"{prefix}{index}", out)


def _is_docstring(stmt: ast.stmt) -> bool:
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Constant)
        and isinstance(stmt.value.value, str)
    )


def _statement(stmt: ast.stmt, qualname: str, path: str, out: dict[int, str]) -> None:
    if isinstance(stmt, Definition):
        # A definition starts a name of its own: its header and body do not depend on where it
        # stands among its neighbours.
        inner = stmt.name if qualname == MODULE else f"{qualname}.{stmt.name}"
        out[id(stmt)] = f"{inner}/{HEADER}"
        for field, value in ast.iter_fields(stmt):
            if field != "body":
                _mark(_nodes(value), f"{inner}/{HEADER}", out)
        _body(stmt.body, inner, "", out, docstring=True)
        return
    place = f"{qualname}/{path}"
    out[id(stmt)] = place
    for field, value in ast.iter_fields(stmt):
        if field in BODY_LABELS and _is_body(value):
            _body(value, qualname, f"{path}.{BODY_LABELS[field]}", out)
        elif field in CLAUSE_LABELS and isinstance(value, list):
            for number, clause in enumerate(value):
                out[id(clause)] = place
                for part, inner_value in ast.iter_fields(clause):
                    if part == "body":
                        _body(inner_value, qualname, f"{path}.{CLAUSE_LABELS[field]}{number}.", out)
                    else:
                        _mark(_nodes(inner_value), place, out)
        else:
            _mark(_nodes(value), place, out)


def _is_body(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(v, ast.stmt) for v in value)


def _nodes(value: object) -> list[ast.AST]:
    if isinstance(value, ast.AST):
        return [value]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, ast.AST)]
    return []
