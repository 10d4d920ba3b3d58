"""The checks of what the author's solutions do when run: the runner finished, the reference
passes and is deterministic, the cases have their properties, the starter fails, every accepted
solution passes and every wrong one fails with its own hint shown.

All of the author's solutions run in one runner process, and the reference once more in a
second (they are trusted code), so a package's solutions take one start of the runner, not one
each.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from judge.authoring.package import Problem, SolutionFile
from judge.authoring.properties import PropertyReport
from judge.authoring.properties import check as check_properties_of
from judge.authoring.properties import render as render_properties
from judge.authoring.validation.diagnostics import Diagnostics
from judge.core.backend import Backend
from judge.core.casekit import Case
from judge.core.checkers import exact
from judge.core.compare import compare
from judge.core.execution import batch_limits, limits_for, run_solutions
from judge.core.grading import attach_hints, grade_solution
from judge.core.report import CaseResult
from judge.core.results import Expected, RunResult, SolutionRun
from judge.core.runner.job import SolutionSource
from judge.core.verdicts import Verdict, worst


@dataclass(frozen=True)
class AuthorRuns:
    """`files` (the reference first) run together, and the reference alone in another process."""

    files: list[SolutionFile]
    first: RunResult
    second: RunResult


def run_author_solutions(
    problem: Problem, files: list[SolutionFile], backend: Backend, startup_s: float
) -> AuthorRuns:
    names = [c.name for c in problem.cases]
    limits = batch_limits(limits_for(problem, startup_s), len(files))
    parts = problem.reference_parts()
    first = run_solutions(problem, [_source(f) for f in files], names, backend, limits, parts)
    second = run_solutions(
        problem, [_source(problem.reference)], names, backend, batch_limits(limits, 1), parts
    )
    return AuthorRuns(files, first, second)


def _source(f: SolutionFile) -> SolutionSource:
    return SolutionSource(f.name, f.source(), f"{f.name}.py")


def check_runner(out: Diagnostics, result: RunResult) -> bool:
    """The run of the author's solutions ended normally; False when it did not (no other
    result of it can be trusted then)."""
    if result.stop is None:
        return True
    out.error(
        "runner",
        f"the author's solutions did not run to the end: {result.stop.text.en}\n{result.log[-2000:]}",
    )
    return False


def check_reference(out: Diagnostics, ref: SolutionRun, cases: list[Case]) -> bool:
    """The reference loads and passes every case; False when not (nothing can be compared
    with it then)."""
    if ref.load_status != "ok":
        out.error("reference", f"does not load: {ref.load_message}")
        return False
    failures = [f"{n}: {c.message or c.status}" for n, c in ref.cases.items() if c.status != "ok"]
    return out.outcome(
        "reference",
        not failures and len(ref.cases) == len(cases),
        f"passes all {len(cases)} cases" if not failures else "fails:\n" + "\n".join(failures),
    )


def check_determinism(out: Diagnostics, cases: list[Case], first: SolutionRun, second: SolutionRun) -> None:
    """Two runs of the reference give identical observations, compared exactly whatever each
    case's own checker allows: expected values that vary would judge learners by chance."""
    strict = exact()
    diffs = []
    for c in cases:
        a, b = first.cases.get(c.name), second.cases.get(c.name)
        if a is None or b is None:
            diffs.append(f"{c.name}: missing in one run")
            continue
        strict_case = replace(c, checker=strict, checkers={})
        diffs.extend(f"{c.name}: {m}" for m in compare(strict_case, a.observations, b.observations)[:1])
    out.outcome(
        "deterministic",
        not diffs,
        "two reference runs give identical observations"
        if not diffs
        else "the reference gives different observations in two runs (seed every random input from rng):\n"
        + "\n".join(diffs),
    )


def check_properties(out: Diagnostics, problem: Problem, enforce: bool) -> PropertyReport:
    """The properties of the cases (judge.authoring.properties), run on the reference in this
    process; a gap is an error when `enforce`, and a warning until then."""
    report = check_properties_of(problem)
    detail = render_properties(report, enforce)
    if not (report.error or report.gaps() or report.stale):
        out.note("properties", detail)
    elif enforce:
        out.error("properties", detail)
    else:
        out.warning("properties", detail)
    return report


def check_solution(
    out: Diagnostics, f: SolutionFile, cases: list[Case], run: SolutionRun, expected: Expected
) -> None:
    """One of the author's solutions graded like a learner's, by what its kind must do."""
    results = grade_solution(cases, run, None, expected)
    if f.kind == "starter":
        check_starter(out, results)
    elif f.kind == "accepted":
        check_accepted(out, f, results)
    else:
        check_wrong(out, f, cases, results, run, expected)


def check_starter(out: Diagnostics, results: list[CaseResult]) -> None:
    """The starter leaves the work to the learner: it does not pass."""
    verdict = worst([r.verdict for r in results])
    failing = [r for r in results if r.verdict != Verdict.AC]
    out.outcome(
        "starter",
        verdict != Verdict.AC,
        f"does not pass ({verdict} on {len(failing)} cases)"
        if verdict != Verdict.AC
        else "passes every case: the starter must leave the work to the learner",
    )


def check_accepted(out: Diagnostics, f: SolutionFile, results: list[CaseResult]) -> None:
    """Another correct formulation passes: the cases do not demand the reference's exact ops."""
    failing = [r for r in results if r.verdict != Verdict.AC]
    passes = worst([r.verdict for r in results]) == Verdict.AC
    out.outcome(
        f.name,
        passes,
        "AC" if passes else "fails:\n" + "\n".join(f"{r.name} {r.verdict}: {r.message.en}" for r in failing),
    )


def check_wrong(
    out: Diagnostics,
    f: SolutionFile,
    cases: list[Case],
    results: list[CaseResult],
    run: SolutionRun,
    expected: Expected,
) -> None:
    """A known mistake fails some case, and a learner who makes it is shown its hint there."""
    failing = [r for r in results if r.verdict != Verdict.AC]
    if not failing:
        out.error(f.name, "passes every case: add a case that catches this mistake")
        return
    attach_hints(cases, results, run, expected)
    own = f.hint()
    shown = [r.name for r in failing if r.hint == own]
    if not shown:
        # The first line of each other hint shown, in the language the author reads here.
        others = sorted({(r.hint.en or r.hint.zh).splitlines()[0][:50] for r in failing if r.hint})
        out.error(
            f.name,
            f"fails {len(failing)} cases but a learner with these outputs is never shown its hint"
            + (f" (shown instead: {'; '.join(others)})" if others else "")
            + ": make a case where it differs from the other wrong solutions",
        )
        return
    out.note(f.name, f"caught by {', '.join(r.name for r in failing)}; hint shown on {len(shown)}")
