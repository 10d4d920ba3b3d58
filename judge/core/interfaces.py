"""What judging needs from a problem and from a store of expected outputs, as Protocols.

`judge.authoring.package.Problem` and `judge.expected.ExpectedStore` are the server's; the
practice kit (judge/authoring/practice.py) has stand-ins built from its own files, because the
package model needs pydantic. Both pairs meet these Protocols, so `judge_source` is checked
against either.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, Protocol, TypeVar

from judge.core.backend import Backend
from judge.core.casekit import Case
from judge.core.results import Expected

Which = Literal["public", "all"]


class RunLimits(Protocol):
    @property
    def time_s(self) -> float: ...
    @property
    def memory_mb(self) -> int: ...
    @property
    def output_kb(self) -> int: ...


class RunSpec(Protocol):
    """The parts of problem.toml a run reads."""

    @property
    def entry_points(self) -> Sequence[str]: ...
    @property
    def forbidden(self) -> Sequence[str]: ...
    @property
    def limits(self) -> RunLimits: ...


class JudgedProblem(Protocol):
    @property
    def id(self) -> str: ...
    @property
    def spec(self) -> RunSpec: ...
    def read(self, name: str) -> str:
        """A file of the package, e.g. cases.py (sent to the runner)."""
        ...

    def data(self) -> dict[str, bytes]:
        """The files the cases read inside the sandbox, by package-relative path."""
        ...

    def select_cases(self, which: Which) -> list[Case]: ...


P = TypeVar("P", bound=JudgedProblem)
P_contra = TypeVar("P_contra", bound=JudgedProblem, contravariant=True)


class ExpectedSource(Protocol[P_contra]):
    """The reference's and the known mistakes' outputs for a problem (computed or recorded).

    Generic in the problem: a store of the server's problems need not accept the kit's."""

    def get(self, problem: P_contra, backend: Backend) -> Expected: ...

    def at_hand(self, problem: P_contra, backend: Backend) -> Expected | None:
        """What `get` would return, if that needs no run and no waiting (else None)."""
        ...
