"""What a run of solutions gave, as records: per case, per solution, why a run stopped, and the
reference's and the known mistakes' runs together (`Expected`). A leaf: it imports only the
backend's records, texts and verdicts, so every stage can hand these on without importing
another stage."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from judge.core.backend import Outcome
from judge.core.texts import Text
from judge.core.verdicts import Verdict

CaseStatus = Literal["ok", "error", "memory", "forbidden"]


@dataclass
class CaseRun:
    """What the runner reported for one case of one solution."""

    status: CaseStatus
    time_ms: float = 0.0
    observations: Any = None
    message: str = ""
    api: str | None = None
    # The judge's own words for the error, in both languages, when it has them (a tensor that
    # cannot be returned); `message` then holds both in one string, for readers of it alone.
    text: Text | None = None
    # The entry point the case reached for and the solution lacks (the case then failed on it).
    missing_entry: str | None = None


@dataclass
class SolutionRun:
    # started (its code began to run and the runner never said more), ok, ce, error, memory;
    # None when the runner never got to it
    load_status: str | None = None  # also "missing_part": it imports a part nobody provided
    load_message: str = ""
    cases: dict[str, CaseRun] = field(default_factory=dict)
    # The part problems whose modules it imported while loading, in import order.
    parts_used: list[str] = field(default_factory=list)
    missing_part: tuple[str, str] | None = None  # (problem id, module) of the part it lacks
    # The entry points it does not define although it loaded: only the cases using them fail.
    missing_entries: list[str] = field(default_factory=list)


@dataclass
class Stop:
    """Why cases without a report have none."""

    verdict: Verdict
    text: Text
    # How long the case that was running when the run stopped had run (its load included), in
    # ms: the runner never reports a case it is killed in, so only the clock can say.
    ran_ms: float = 0.0

    @property
    def message(self) -> str:
        return self.text.both()


@dataclass
class RunResult:
    solutions: list[SolutionRun]
    outcome: Outcome
    stop: Stop | None  # None when the runner finished normally
    runtime: dict[str, Any] = field(default_factory=dict)

    @property
    def log(self) -> str:
        return self.outcome.log.decode("utf-8", errors="replace")


@dataclass(frozen=True)
class WrongSolution:
    name: str
    hint: str
    run: SolutionRun


@dataclass(frozen=True)
class Expected:
    reference: SolutionRun
    wrong: list[WrongSolution]
