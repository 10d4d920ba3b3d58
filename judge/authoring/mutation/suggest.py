"""The mutant a declaration that matches none probably meant.

A declared equivalent stops matching when the reference is edited (a statement added before
its own renumbers it) or when it still names a mutant by the `line:column:operator` ids used
before issue 32. Its operator, and its function and statement (or its line and column, for an
old id), point at the mutant it meant: of the same operator, a survivor nothing declares
first (the declaration is there to excuse one), then the nearest in the same function.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from judge.authoring.mutation.generate import Mutant

OLD_ID = re.compile(r"^(?P<line>[0-9]+):(?P<col>[0-9]+):(?P<operator>[^#]+)(#(?P<number>[0-9]+))?$")
NEW_ID = re.compile(r"^(?P<function>.+)/(?P<path>[^/:]+):(?P<operator>[^#:]+)(#(?P<number>[0-9]+))?$")
FAR = 10**6


@dataclass(frozen=True)
class DeclaredId:
    """What a declared id says about where its mutant was: a place, or (old ids) a line and column."""

    operator: str
    number: int
    function: str | None = None
    path: tuple[str, ...] = ()
    line: int | None = None
    col: int | None = None


def parse(declared: str) -> DeclaredId | None:
    if m := OLD_ID.match(declared):
        number = int(m["number"] or 1)
        return DeclaredId(m["operator"], number, line=int(m["line"]), col=int(m["col"]))
    if m := NEW_ID.match(declared):
        number = int(m["number"] or 1)
        return DeclaredId(m["operator"], number, m["function"], tuple(m["path"].split(".")))
    return None


def closest(declared: str, mutants: Sequence[Mutant], survivors: Collection[str] = ()) -> Mutant | None:
    """The mutant of `mutants` that `declared` most likely meant, if one has its operator.
    `survivors` are the ids of the undeclared survivors, which come first."""
    wanted = parse(declared)
    if wanted is None:
        return None
    same = [m for m in mutants if m.operator == wanted.operator and m.id != declared]
    if not same:
        return None
    return min(same, key=lambda m: (m.id not in survivors, *_distance(wanted, m)))


def _distance(wanted: DeclaredId, m: Mutant) -> tuple[int, ...]:
    if wanted.line is not None and wanted.col is not None:
        return (abs(m.line - wanted.line), abs(m.col - wanted.col), abs(m.number - wanted.number))
    path = tuple(m.place.rsplit("/", 1)[1].split("."))
    common = next((i for i, (a, b) in enumerate(zip(wanted.path, path, strict=False)) if a != b), None)
    shared = min(len(wanted.path), len(path)) if common is None else common
    if common is None:  # the same statement, or one inside the other
        apart = abs(len(wanted.path) - len(path))
    else:
        apart = abs(_index(wanted.path[common]) - _index(path[common]))
    return (m.function != wanted.function, -shared, apart, abs(m.number - wanted.number))


def _index(segment: str) -> int:
    """The statement index a path segment ends with (`3`, `else0`), or FAR for `def`."""
    digits = segment.lstrip("abcdefghijklmnopqrstuvwxyz")
    return int(digits) if digits.isdigit() else FAR
