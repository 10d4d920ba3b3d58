"""What a run of solutions gave, as records: per case, per solution, why a run stopped, and the
reference's and the known mistakes' runs together (`Expected`). A leaf: it imports only the
backend's and the frames' records, texts and verdicts, so every stage can hand these on without importing
another stage."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from judge.core.backend import Outcome
from judge.core.frames import CaseStatus, Hello
from judge.core.texts import Text
from judge.core.verdicts import Verdict


@dataclass
class CaseRun:
    """What the runner reported for one case of one solution."""

    status: CaseStatus
    time_ms: float = 0.0
    observations: Any = None
    # What the runner said of an error: a traceback or an error line (the code and Python's
    # words, our few sentences in English: judge.core.grading.runner_message words it for each
    # reader). Authors' tools print it as it is.
    message: str = ""
    api: str | None = None
    # The judge's own words for the error, in both languages, when it has them (a tensor that
    # cannot be returned, an entry point the solution lacks): what the learner is told instead.
    text: Text | None = None
    # The entry point the case reached for and the solution lacks (the case then failed on it).
    missing_entry: str | None = None
    # The line of the solution's file the error was raised at (its innermost own frame); None
    # when that frame is in another file (one of their parts) or the runner did not say.
    line: int | None = None
    # (problem id, module) of a part the case imported that nobody provided.
    missing_part: tuple[str, str] | None = None
    # What the case drew from its Rng, when the job recorded it (the public cases' job only).
    inputs: tuple[dict[str, Any], ...] = ()


@dataclass
class SolutionRun:
    # started (its code began to run and the runner never said more), ok, ce, error, memory;
    # None when the runner never got to it
    load_status: str | None = None  # also "missing_part": it imports a part nobody provided
    load_message: str = ""
    # The line of the solution's file a compile or import error points at, when the runner said.
    load_line: int | None = None
    # The judge's own words for a load it refused (no entry point, one that cannot be called).
    load_text: Text | None = None
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


@dataclass
class RunResult:
    solutions: list[SolutionRun]
    outcome: Outcome
    stop: Stop | None  # None when the runner finished normally
    hello: Hello | None = None  # what the runner said of itself when it was ready (None: never)

    @property
    def log(self) -> str:
        return self.outcome.log.decode("utf-8", errors="replace")


@dataclass(frozen=True)
class WrongSolution:
    name: str
    # What a learner whose outputs match it is told (its docstring, read once where the
    # package is loaded: judge.authoring.package); EMPTY when it has none.
    hint: Text
    run: SolutionRun


@dataclass(frozen=True)
class Expected:
    reference: SolutionRun
    wrong: list[WrongSolution]

    @classmethod
    def from_runs(cls, runs: Sequence[SolutionRun], wrong: Sequence[tuple[str, Text]]) -> Expected:
        """The one way an `Expected` is made from a trusted run (the store's, validate's, the
        kit's recorded one): the reference's run first, the known mistakes' runs last, in the
        order of `wrong` (each one's name and hint). Runs between them (`judge validate` runs the
        starter and the accepted solutions in the same process) are not kept."""
        if len(runs) <= len(wrong):
            raise ValueError(f"{len(runs)} runs cannot hold the reference and {len(wrong)} wrong solutions")
        mistakes = runs[len(runs) - len(wrong) :]  # not runs[-len(wrong):], which is all of them for none
        return cls(runs[0], [WrongSolution(n, h, r) for (n, h), r in zip(wrong, mistakes, strict=True)])
