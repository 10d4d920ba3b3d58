"""Run a package's mutants through its cases and grade each like a wrong solution.

Mutants are the author's code changed by one edit, so they are trusted: many run in one
runner process (a package's mutants take seconds, not a runner start each). A mutant that
hangs, runs out of memory or breaks the process stops its batch; it counts as killed (a
learner's code that did so would not pass either) and the rest of the batch runs again in
a fresh process.

A mutant is killed when some case is not AC for it, and survives when every case is.
Survivors the package declares equivalent (in problem.toml, with a reason) are counted
apart; an undeclared survivor is a promise of the statement that no case checks.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any

from judge.authoring.mutation.generate import Mutant, generate
from judge.authoring.mutation.operators import STATE_OPERATOR_NAMES
from judge.authoring.mutation.suggest import closest
from judge.core.backend import Backend, Limits
from judge.core.diagnose import diagnose_case
from judge.core.execution import limits_for, run_solutions
from judge.core.grading import attach_hints, grade_solution
from judge.core.results import Expected, RunResult
from judge.core.runner.job import SolutionSource
from judge.core.verdicts import Verdict

if TYPE_CHECKING:
    from judge.authoring.package import Problem

BATCH = 24
# Time for one mutant: this many times the reference's own, but at least MIN_MUTANT_S and at
# most the problem's limit. A mutant slower than that is killed (as a learner's would be).
SLOWDOWN = 20.0
MIN_MUTANT_S = 2.0
# A listed mistake's hint shown for this share of the killed mutants (and at least this many).
UNSPECIFIC_SHARE = 0.3
UNSPECIFIC_AT_LEAST = 5


@dataclass
class MutantResult:
    mutant: Mutant
    killed: bool
    # The cases that told it apart, or why the run stopped ("TLE: ...").
    by: list[str] = field(default_factory=list)
    # Per failing case, the verdicts and results a learner with this code would see.
    results: list[Any] = field(default_factory=list)


@dataclass
class GroupScore:
    """One operator group's share of a MutationScore."""

    generated: int = 0
    killed: int = 0
    equivalent: int = 0
    with_feedback: int = 0


@dataclass(frozen=True)
class StaleDeclaration:
    """A declared equivalent that names no mutant of the reference, and the one it probably meant."""

    declared: str
    meant: Mutant | None


@dataclass
class MutationScore:
    results: list[MutantResult]
    equivalent: dict[str, str]  # declared id -> reason

    @property
    def generated(self) -> int:
        return len(self.results)

    @property
    def killed(self) -> list[MutantResult]:
        return [r for r in self.results if r.killed]

    @property
    def survivors(self) -> list[MutantResult]:
        """Undeclared survivors: the cases let these mistakes pass."""
        return [r for r in self.results if not r.killed and r.mutant.id not in self.equivalent]

    @property
    def declared_survivors(self) -> list[MutantResult]:
        return [r for r in self.results if not r.killed and r.mutant.id in self.equivalent]

    @property
    def with_feedback(self) -> list[MutantResult]:
        """Killed mutants a learner would be told something about beyond numbers: a failing case
        with a diagnosis or a listed mistake's hint, or a verdict that names its cause itself
        (a traceback, a time-out, a memory limit)."""
        return [r for r in self.killed if _explained(r)]

    @property
    def unexplained(self) -> list[MutantResult]:
        return [r for r in self.killed if not _explained(r)]

    @property
    def declared_killed(self) -> list[MutantResult]:
        """Declared equivalents that a case kills: the declaration is no longer true."""
        return [r for r in self.killed if r.mutant.id in self.equivalent]

    def unmatched(self) -> list[StaleDeclaration]:
        """Declared equivalents that match no generated mutant, each with the mutant it
        probably meant (judge.authoring.mutation.suggest), if one has its operator."""
        made = {r.mutant.id for r in self.results}
        mutants = [r.mutant for r in self.results]
        survivors = {r.mutant.id for r in self.survivors}
        return [
            StaleDeclaration(declared, closest(declared, mutants, survivors))
            for declared in sorted(set(self.equivalent) - made)
        ]

    def to_dict(self) -> dict[str, Any]:
        return {
            "generated": self.generated,
            "killed": len(self.killed),
            "equivalent": len(self.declared_survivors),
            "survived": len(self.survivors),
            "survivors": [
                {"id": r.mutant.id, "line": r.mutant.line, "change": r.mutant.change} for r in self.survivors
            ],
        }

    def feedback(self) -> dict[str, Any]:
        return {
            "killed": len(self.killed),
            "with_feedback": len(self.with_feedback),
            "by_group": {name: asdict(g) for name, g in self.groups().items()},
            "unspecific_hints": self.unspecific_hints(),
        }

    def groups(self) -> dict[str, GroupScore]:
        """The same counts per operator group: the single-change operators and the state ones
        (issue 28), so that a package whose state mutants die without a word is seen as such."""
        out = {"single": GroupScore(), "state": GroupScore()}
        for r in self.results:
            g = out["state" if r.mutant.operator in STATE_OPERATOR_NAMES else "single"]
            g.generated += 1
            if r.killed:
                g.killed += 1
                g.with_feedback += 1 if _explained(r) else 0
            elif r.mutant.id in self.equivalent:
                g.equivalent += 1
        return out

    def unspecific_hints(self) -> list[dict[str, Any]]:
        """Hints of listed mistakes that many unrelated mutants are shown: a hint that fires for
        a third of all the ways to be wrong is not telling anyone what their mistake is."""
        counts: dict[str, int] = {}
        for r in self.killed:
            for hint in {c.hint.en or c.hint.zh for c in r.results if c.hint}:
                counts[hint] = counts.get(hint, 0) + 1
        limit = max(UNSPECIFIC_AT_LEAST, UNSPECIFIC_SHARE * len(self.killed))
        return [
            {"hint": hint.splitlines()[0][:80], "mutants": n}
            for hint, n in sorted(counts.items(), key=lambda kv: -kv[1])
            if n >= limit
        ]


def mutant_limits(problem: Problem, startup_s: float, reference_s: float, n: int) -> Limits:
    base = limits_for(problem, startup_s)
    each = min(base.wall_s, max(MIN_MUTANT_S, SLOWDOWN * reference_s))
    return replace(base, wall_s=each * n, cpu_s=base.cpu_s + each * n, log_bytes=1024 * 1024)


def score_mutants(
    problem: Problem,
    backend: Backend,
    expected: Expected,
    reference_s: float,
    startup_s: float = 30.0,
    mutants: list[Mutant] | None = None,
) -> MutationScore:
    """Generate (unless given) and run the mutants of the package's reference."""
    mutants = generate(problem.reference.source()) if mutants is None else mutants
    cases = problem.cases
    names = [c.name for c in cases]
    results: dict[str, MutantResult] = {}
    pending = list(mutants)
    while pending:
        batch = pending[:BATCH]
        limits = mutant_limits(problem, startup_s, reference_s, len(batch))
        sources = [SolutionSource(f"mutant/{m.id}", m.source, "reference.py") for m in batch]
        run = run_solutions(problem, sources, names, backend, limits, problem.reference_parts())
        done = _finished(run, batch)
        for m, solution in zip(batch[:done], run.solutions[:done], strict=True):
            graded = grade_solution(cases, solution, None, expected, explain=False)
            attach_hints(cases, graded, solution, expected)
            failing = [r for r in graded if r.verdict != Verdict.AC]
            _explain_until_one(cases, solution, expected, failing)
            results[m.id] = MutantResult(m, bool(failing), [r.name for r in failing], failing)
        if done < len(batch):
            culprit = batch[done]
            why = next(iter(run.stop.text.en.splitlines()), "") if run.stop else "the run stopped"
            verdict = run.stop.verdict if run.stop else Verdict.RE
            results[culprit.id] = MutantResult(culprit, True, [f"{verdict}: {why}"])
            done += 1
        pending = pending[done:]
    equivalent = {e.id: e.reason for e in problem.spec.mutants.equivalent}
    return MutationScore([results[m.id] for m in mutants], equivalent)


def _finished(run: RunResult, batch: list[Mutant]) -> int:
    """How many mutants of the batch, from the first, ran to the end of their cases."""
    if run.stop is None:
        return len(batch)
    for i, solution in enumerate(run.solutions):
        if solution.load_status in (None, "started"):
            return i
        if solution.load_status == "ok" and len(solution.cases) < len(run.solutions[0].cases or {}) and i:
            return i
    # Every mutant reported something but the process did not finish: the last one broke it.
    return len(batch) - 1


def _explained(r: MutantResult) -> bool:
    if not r.results:  # stopped the run (TLE, MLE, a crash): the verdict says why
        return True
    return any(c.verdict != Verdict.WA or c.diagnoses or c.hint for c in r.results)


def _explain_until_one(cases: list[Any], solution: Any, expected: Expected, failing: list[Any]) -> None:
    """Diagnose the failing cases one at a time until one has something to say: the feedback
    count needs to know whether a learner would be told anything, not everything."""
    if any(r.hint or r.verdict != Verdict.WA for r in failing):
        return
    by_name = {c.name: c for c in cases}
    for r in failing:
        got, ref = solution.cases.get(r.name), expected.reference.cases.get(r.name)
        if got is None or ref is None or got.status != "ok":
            continue
        r.diagnoses = diagnose_case(by_name[r.name], ref.observations, got.observations)
        if r.diagnoses:
            return
