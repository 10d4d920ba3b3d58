"""From runner results to case verdicts, scores, hints and the submission's report."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Literal

from judge.casekit import Case
from judge.compare import compare
from judge.execution import RunResult, SolutionRun, Stop, limits_for, run_solutions
from judge.expected import Expected, ExpectedStore, TrustedRunError
from judge.report import CaseResult, Report
from judge.runner.job import LEARNER_FILE, SolutionSource
from judge.verdicts import Verdict, worst
from sandbox.backend import Backend
from sandbox.local import UNSANDBOXED_WARNING

if TYPE_CHECKING:  # the practice kit has no pydantic, so no judge.package at run time
    from judge.package import Problem

MAX_SOURCE_BYTES = 256 * 1024


def grade_solution(
    cases: list[Case], run: SolutionRun, stop: Stop | None, expected: Expected
) -> list[CaseResult]:
    results: list[CaseResult] = []
    load_failure = _load_failure(run, stop)
    stopped_at: str | None = None
    for c in cases:
        r = CaseResult(c.name, c.public, Verdict.SE, 0, c.points, 0.0, description=c.description)
        got = run.cases.get(c.name)
        if load_failure is not None:
            r.verdict, r.message = load_failure
        elif got is None:
            if stop is None:
                r.verdict, r.message = (
                    Verdict.SE,
                    "评测进程没有报告这个用例 the runner did not report this case",
                )
            elif stopped_at is None:
                stopped_at = c.name
                r.verdict, r.message = stop.verdict, stop.message
            else:
                r.verdict = stop.verdict
                r.message = f"未运行 not run: the run stopped during case {stopped_at}"
        else:
            r.time_ms = got.time_ms
            ref = expected.reference.cases.get(c.name)
            if ref is None or ref.status != "ok":
                r.verdict, r.message = (
                    Verdict.SE,
                    "参考解没有这个用例的结果 the reference has no result for this case",
                )
            elif got.status == "ok":
                mismatches = compare(c, ref.observations, got.observations)
                if mismatches:
                    r.verdict = Verdict.WA
                    r.message = "\n".join(str(m) for m in mismatches)
                else:
                    r.verdict, r.score = Verdict.AC, c.points
            elif got.status == "forbidden":
                r.verdict = Verdict.WA
                r.message = (
                    f"调用了本题禁止的 {got.api}，请自己实现 / "
                    f"your code calls {got.api}, which this problem forbids: write it yourself"
                )
            elif got.status == "memory":
                r.verdict, r.message = Verdict.MLE, "内存不足 your code ran out of memory\n" + got.message
            else:
                r.verdict, r.message = Verdict.RE, got.message
        results.append(r)
    return results


def _load_failure(run: SolutionRun, stop: Stop | None) -> tuple[Verdict, str] | None:
    status = run.load_status
    if status is None:
        if stop is None:
            return Verdict.SE, "评测进程没有加载你的代码 the runner never loaded your code"
        return None  # the stop explains it case by case
    if status == "ce":
        return Verdict.CE, run.load_message
    if status == "memory":
        return (
            Verdict.MLE,
            "导入你的代码时内存不足 out of memory while importing your code\n" + run.load_message,
        )
    if status == "error":
        return Verdict.RE, "导入你的代码时出错 error while importing your code\n" + run.load_message
    return None


def attach_hints(cases: list[Case], results: list[CaseResult], run: SolutionRun, expected: Expected) -> None:
    """Give each wrong case the hint of a known wrong solution whose observations it matches.

    A wrong solution counts for a case only where it fails that case itself. Among several
    matches, the one that matches the most of this submission's failing cases wins.
    """
    by_name = {c.name: c for c in cases}
    failing = [r for r in results if r.verdict == Verdict.WA and run.cases.get(r.name) is not None]
    matches: dict[str, list[str]] = {}  # case -> wrong solutions that match it
    for r in failing:
        got = run.cases[r.name]
        if got.status != "ok":
            continue
        c = by_name[r.name]
        ref = expected.reference.cases[r.name]
        for w in expected.wrong:
            theirs = w.run.cases.get(r.name)
            if theirs is None or theirs.status != "ok" or not w.hint:
                continue
            if not compare(c, ref.observations, theirs.observations):
                continue  # this wrong solution passes the case: it explains nothing here
            if not compare(c, theirs.observations, got.observations):
                matches.setdefault(r.name, []).append(w.name)
    strength: dict[str, int] = {}
    for names in matches.values():
        for n in names:
            strength[n] = strength.get(n, 0) + 1
    hints = {w.name: w.hint for w in expected.wrong}
    for r in failing:
        candidates = matches.get(r.name, [])
        if candidates:
            # Most matched cases first; among equals, the first in name order.
            best = max(candidates, key=lambda n: (strength[n], -candidates.index(n)))
            r.hint = hints[best]


def _every_case(cases: list[Case], verdict: Verdict, message: str) -> list[CaseResult]:
    """One verdict for the whole submission, when nothing was run case by case."""
    return [
        CaseResult(c.name, c.public, verdict, 0, c.points, 0.0, message, description=c.description)
        for c in cases
    ]


def build_report(
    problem: Problem,
    cases: list[Case],
    results: list[CaseResult],
    backend: Backend,
    elapsed_ms: float,
    log: str = "",
) -> Report:
    warnings = []
    if not backend.is_sandbox:
        warnings.append(UNSANDBOXED_WARNING)
    return Report(
        problem=problem.id,
        verdict=worst([r.verdict for r in results]),
        score=sum(r.score for r in results),
        max_score=sum(c.points for c in cases),
        backend=backend.name,
        time_ms=round(sum(r.time_ms for r in results), 1),
        cases=results,
        elapsed_ms=round(elapsed_ms, 1),
        log=log[-4000:],
        warnings=warnings,
    )


def judge_source(
    problem: Problem,
    source: str,
    backend: Backend,
    store: ExpectedStore,
    which: Literal["public", "all"] = "all",
    startup_s: float = 30.0,
) -> Report:
    """Judge one learner submission end to end."""
    started = time.perf_counter()
    cases = problem.select_cases(which)
    if len(source.encode("utf-8")) > MAX_SOURCE_BYTES:
        results = _every_case(
            cases, Verdict.CE, f"代码太长 your code is larger than {MAX_SOURCE_BYTES // 1024} KiB"
        )
        return build_report(problem, cases, results, backend, 0.0)
    # On a cache miss the trusted run (reference + wrong solutions) and the learner's run are
    # independent: run them side by side so a cold judgement costs one runner start, not two.
    with ThreadPoolExecutor(max_workers=1) as pool:
        pending = pool.submit(store.get, problem, backend)
        result: RunResult = run_solutions(
            problem,
            [SolutionSource("solution", source, LEARNER_FILE)],
            [c.name for c in cases],
            backend,
            limits_for(problem, startup_s),
        )
        try:
            expected = pending.result()
        except TrustedRunError as exc:
            results = _every_case(cases, Verdict.SE, f"参考解无法运行 the reference could not be run: {exc}")
            return build_report(problem, cases, results, backend, (time.perf_counter() - started) * 1000)
    run = result.solutions[0]
    results = grade_solution(cases, run, result.stop, expected)
    attach_hints(cases, results, run, expected)
    return build_report(problem, cases, results, backend, (time.perf_counter() - started) * 1000, result.log)
