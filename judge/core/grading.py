"""From runner results to case verdicts, scores, hints and the submission's report."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

import torch

from judge.core.backend import Backend
from judge.core.casekit import Case
from judge.core.checkers import Mismatch
from judge.core.compare import compare, compare_leaf
from judge.core.compared import compared
from judge.core.diagnose import diagnose_case, leaves
from judge.core.errormap import error_map
from judge.core.errors import TrustedRunError
from judge.core.execution import limits_for, run_solutions
from judge.core.interfaces import ExpectedSource, JudgedProblem, P, Which
from judge.core.messages import msg
from judge.core.public_cases import public_cases_source
from judge.core.report import CaseResult, PartUse, Report
from judge.core.results import Expected, RunResult, SolutionRun, Stop, WrongSolution
from judge.core.runner.job import LEARNER_FILE, PartSource, SolutionSource
from judge.core.runner.tracebacks import OUTSIDE, OWN_FRAMES
from judge.core.texts import Text
from judge.core.verdicts import Verdict, worst

MAX_SOURCE_BYTES = 256 * 1024
# Without a differing tensor, a listed mistake is named only on this many differing values.
MIN_SCALAR_EVIDENCE = 2


def runner_message(text: str) -> Text:
    """A message from the runner (a traceback, an error line) for each reader: the code and
    Python's own words are the same in both languages, our sentences in the reader's."""
    zh = text
    for pair in (OWN_FRAMES, OUTSIDE):
        zh = zh.replace(pair[1], pair[0])
    return Text(zh, text)


def grade_solution(
    cases: list[Case],
    run: SolutionRun,
    stop: Stop | None,
    expected: Expected,
    explain: bool = True,
    sealed: bool = False,
) -> list[CaseResult]:
    """Each case's verdict and message; with `explain`, also its diagnoses and error map (the
    mutation score asks for those only where it needs them: they cost more than the verdict).

    `sealed`: the run held hidden cases, so no word the learner's code or its process wrote
    (an exception, a forbidden call's name, a load error, a log tail) goes into a message;
    the judge's own comparison of observations and its sentence for each stop do."""
    results: list[CaseResult] = []
    load_failure = _load_failure(run, stop)
    if sealed and load_failure is not None:  # not even the line: the code's process wrote it
        load_failure = Failure(load_failure.verdict, msg("sealed_load"))
    if sealed and stop is not None and stop.verdict in (Verdict.RE, Verdict.SE):
        stop = Stop(stop.verdict, msg("sealed_stopped"), stop.ran_ms)
    stopped_at: str | None = None
    for c in cases:
        r = CaseResult(c.name, c.public, Verdict.SE, 0, c.points, 0.0, description=c.description)
        got = run.cases.get(c.name)
        if load_failure is not None:
            load_failure.apply(r)
            r.ran = False
        elif got is None:
            if stop is None:
                r.verdict, r.message = (
                    Verdict.SE,
                    msg("case_not_reported"),
                )
            elif stopped_at is None:
                stopped_at = c.name
                r.verdict, r.message = stop.verdict, stop.text
                if run.load_status is not None:  # this solution's code was what ran out of time
                    r.time_ms = stop.ran_ms
            else:
                r.verdict = stop.verdict
                r.message = msg("not_run", case=stopped_at)
                r.ran = False
        else:
            r.time_ms = got.time_ms
            ref = expected.reference.cases.get(c.name)
            if ref is None or ref.status != "ok":
                r.verdict, r.message = (
                    Verdict.SE,
                    msg("reference_missing_case"),
                )
            elif got.status == "ok":
                mismatches = compare(c, ref.observations, got.observations)
                if mismatches:
                    r.verdict = Verdict.WA
                    r.message = Text.join([_with_path(m) for m in mismatches])
                    if explain:
                        r.diagnoses = diagnose_case(c, ref.observations, got.observations)
                    if explain and c.public and not sealed:
                        r.error_map = _first_error_map(c, ref.observations, got.observations, mismatches)
                        r.compared = compared(c, ref.observations, got.observations, mismatches)
                else:
                    r.verdict, r.score = Verdict.AC, c.points
            elif got.missing_entry is not None and got.text is not None:
                # The judge's own sentence, naming an entry point the load frame declared missing.
                r.verdict, r.message = Verdict.CE, got.text
            elif got.status == "forbidden":
                r.verdict = Verdict.WA
                r.message = msg("sealed_forbidden") if sealed else msg("forbidden", api=got.api)
            elif got.status == "memory":
                r.verdict = Verdict.MLE
                r.message = msg("case_out_of_memory")
                if not sealed:
                    r.message = r.message + runner_message("\n" + got.message)
            else:
                r.verdict = Verdict.RE
                r.message = msg("sealed_error") if sealed else (got.text or runner_message(got.message))
            if c.public and not sealed and r.verdict != Verdict.AC and got.inputs:
                r.inputs = list(got.inputs)  # recorded by the public cases' job only
            if r.verdict in (Verdict.RE, Verdict.MLE) and not sealed:  # the code's process says both
                r.line = got.line
                r.missing_problem = got.missing_part[0] if got.missing_part is not None else None
        results.append(r)
    return results


def _with_path(m: Mismatch) -> Text:
    return Text(m.in_language("zh"), m.in_language("en"))


def _first_error_map(
    case: Case, expected: Any, got: Any, mismatches: list[Mismatch]
) -> dict[str, Any] | None:
    """The picture of the first failing tensor (a public case's; see judge.core.errormap)."""
    want, have = leaves(expected), leaves(got)
    for m in mismatches:
        e, g = want.get(m.path), have.get(m.path)
        if (
            isinstance(e, torch.Tensor)
            and isinstance(g, torch.Tensor)
            and e.shape == g.shape
            and e.numel() > 1
            and case.checker_for(m.path).elementwise  # two random draws differ everywhere
        ):
            emap = error_map(e, g, case.checker_for(m.path))
            if emap is not None:
                emap["path"] = m.path
                return emap
    return None


class Failure(NamedTuple):
    """Why every case of a solution failed alike (it did not load, or the run stopped), with what
    each of those cases carries of it."""

    verdict: Verdict
    text: Text
    line: int | None = None  # of the solution's file (a compile or import error)
    missing_problem: str | None = None  # the problem whose part it lacks

    def apply(self, r: CaseResult) -> None:
        r.verdict, r.message, r.line, r.missing_problem = (
            self.verdict,
            self.text,
            self.line,
            self.missing_problem,
        )


def _load_failure(run: SolutionRun, stop: Stop | None) -> Failure | None:
    status, line = run.load_status, run.load_line
    if status is None:
        if stop is None:
            return Failure(Verdict.SE, msg("never_loaded"))
        return None  # the stop explains it case by case
    if status == "ce":
        return Failure(Verdict.CE, run.load_text or runner_message(run.load_message), line)
    if status == "missing_part" and run.missing_part is not None:
        # Cannot be loaded: the code it imports does not exist yet.
        problem, module = run.missing_part
        return Failure(Verdict.CE, msg("part_missing", problem=problem, module=module), None, problem)
    if status == "memory":
        return Failure(
            Verdict.MLE, msg("import_out_of_memory") + runner_message("\n" + run.load_message), line
        )
    if status == "error":
        return Failure(Verdict.RE, msg("import_error") + runner_message("\n" + run.load_message), line)
    return None


class Evidence(NamedTuple):
    """Where a wrong solution differs from the reference on a case (see `_evidence`)."""

    specific: int  # leaves of values of its own: a float value, a float tensor
    weak: int  # pieces that many unrelated mistakes share: a flag, an integer, a changed token id
    shared: int  # leaves holding what a whole class of mistakes gives (`_shared`)

    def __bool__(self) -> bool:
        return bool(self.specific or self.weak or self.shared)


def _evidence(case: Case, reference: Any, wrong: Any) -> Evidence:
    """Where a wrong solution differs from the reference on a case. A boolean, an integer or a
    string is one weak piece, and so is each differing entry of an integer or boolean tensor
    (token ids, counts, flags): many unrelated mistakes flip the same flag or move the same
    draw. A value that a whole class of mistakes gives (`_shared`) names that class only. A
    float value, or a float tensor of values of its own, is specific."""
    specific = weak = shared = 0
    want, theirs = leaves(reference), leaves(wrong)
    for path, e in want.items():
        if path in theirs and compare_leaf(case, path, e, theirs[path]):
            pieces = _weak_pieces(e, theirs[path])
            if pieces:
                weak += pieces
            elif _shared(case, path, want, theirs[path]):
                shared += 1
            else:
                specific += 1
    return Evidence(specific, weak, shared)


def _weak_pieces(expected: Any, value: Any) -> int:
    """How many weak pieces of evidence a differing leaf is (0: it is specific)."""
    if isinstance(expected, torch.Tensor):
        if expected.is_floating_point() or expected.is_complex():
            return 0
        same_shape = isinstance(value, torch.Tensor) and value.shape == expected.shape
        if same_shape and not value.is_floating_point():
            return max(1, int((value != expected).sum()))
        return 1
    return 1 if isinstance(expected, (bool, int, str)) or expected is None else 0


def _shared(case: Case, path: str, want: dict[str, Any], value: Any) -> bool:
    """A wrong value that does not say which mistake made it: the reference's own values in
    another dtype (what every missing or extra cast gives), or what the reference returns at
    another leaf of the case (what every mistake gives that ignores the argument in which the
    two calls differ, or keeps a value from the other call: for a one-token sequence with its
    only key padded, "a finite fill value", "the padding mask ignored" and "a mask kept from
    the call before" all return v, the unpadded call's result)."""
    if not isinstance(value, torch.Tensor) or value.numel() == 0:
        return False
    e = want[path]
    recast = isinstance(e, torch.Tensor) and e.dtype != value.dtype and e.shape == value.shape
    if recast and not compare_leaf(case, path, e, value.to(e.dtype)):
        return True
    return any(
        other != path
        and isinstance(o, torch.Tensor)
        and o.shape == value.shape
        and o.dtype == value.dtype
        and not compare_leaf(case, path, o, value)
        for other, o in want.items()
    )


def _contradicts(case: Case, reference: Any, wrong: Any, got: Any) -> bool:
    """The learner's observations argue against the wrong solution on this case: where the
    wrong solution differs from the reference, the learner's value is neither the wrong
    solution's nor the reference's. Something else happens exactly where the mistake acts.
    (A value equal to the reference's says nothing against it: a learner may make the mistake
    in one of the places the wrong solution makes it, in `softmax` and not in `log_softmax`.)"""
    want, theirs, have = leaves(reference), leaves(wrong), leaves(got)
    differs = [p for p, e in want.items() if p in theirs and compare_leaf(case, p, e, theirs[p])]
    if not differs:  # it differs in the tree's structure: compare the whole case
        return bool(compare(case, wrong, got)) and bool(compare(case, reference, got))
    return any(
        p not in have
        or (compare_leaf(case, p, theirs[p], have[p]) and compare_leaf(case, p, want[p], have[p]))
        for p in differs
    )


def _contradicted(
    cases: list[Case], results: list[CaseResult], run: SolutionRun, expected: Expected
) -> set[str]:
    """The wrong solutions this submission's own observations argue against (`_contradicts`,
    on some case of the run where the wrong solution fails)."""
    by_name = {c.name: c for c in cases}
    out: set[str] = set()
    for w in expected.wrong:
        if not w.hint:
            continue
        for r in results:
            ref, theirs, got = (
                expected.reference.cases.get(r.name),
                w.run.cases.get(r.name),
                run.cases.get(r.name),
            )
            if ref is None or theirs is None or got is None:
                continue
            if not ref.status == theirs.status == got.status == "ok":
                continue  # nothing observed to tell them apart by
            if _contradicts(by_name[r.name], ref.observations, theirs.observations, got.observations):
                out.add(w.name)
                break
    return out


def attach_hints(cases: list[Case], results: list[CaseResult], run: SolutionRun, expected: Expected) -> None:
    """Give each wrong case the hint of a known wrong solution whose observations it matches.

    A hint names one mistake, so it is shown only where this run's observations single that
    mistake out. A wrong solution matches a case where it fails the case itself and the
    learner's observations are its own on the whole case. It is named when:

    - some matching case is specific evidence (`_evidence`): where the wrong solution differs
      from the reference there is a float tensor of values of its own, or at least two weak
      pieces (one boolean, one integer or one changed token id says too little). A value that
      a whole class of mistakes gives (`_shared`: the right values in another dtype, the right
      result of another call of the case) names only that class: it counts for a wrong
      solution whose differences in this run are all of that kind (a missing cast, an
      argument ignored), and for no other;
    - nothing in the run argues against it (`_contradicted`): wherever the wrong solution's
      values differ from the reference's, in any case of the run, the learner's are the wrong
      solution's or the reference's. A learner wrong there in another way does something else
      where the mistake acts. (Right there is no argument against it: the learner may make
      the mistake in one of the places the wrong solution makes it.)

    It is then shown on every failing case it matches. Among several, the one that matches the
    most of this submission's failing cases wins, then the one that would fail the fewest of
    the cases this submission passes; if two are still equal, the learner is told neither
    (the evidence does not say which mistake it is).
    """
    by_name = {c.name: c for c in cases}
    failing = [r for r in results if r.verdict == Verdict.WA and run.cases.get(r.name) is not None]
    if not failing:
        return
    against = _contradicted(cases, results, run, expected)
    memo: dict[tuple[str, str], Evidence] = {}

    def evidence(w: WrongSolution, name: str) -> Evidence:
        """Where `w` differs from the reference on case `name` (nothing if either did not run)."""
        if (w.name, name) not in memo:
            ref, theirs = expected.reference.cases.get(name), w.run.cases.get(name)
            ran = ref is not None and ref.status == "ok" and theirs is not None and theirs.status == "ok"
            memo[w.name, name] = (
                _evidence(by_name[name], ref.observations, theirs.observations)  # type: ignore[union-attr]
                if ran
                else Evidence(0, 0, 0)
            )
        return memo[w.name, name]

    def of_a_class(w: WrongSolution) -> bool:
        """No values of its own anywhere in the run: every difference is a dtype, or another
        call's right result. Such a wrong solution is that class of mistake itself (a missing
        cast, an argument ignored), and that kind of evidence names it."""
        return not any(evidence(w, c.name).specific for c in cases)

    matches: dict[str, list[str]] = {}  # case -> wrong solutions that match it
    singled: set[str] = set()  # wrong solutions matched on specific evidence somewhere
    for r in failing:
        got = run.cases[r.name]
        if got.status != "ok":
            continue
        c = by_name[r.name]
        for w in expected.wrong:
            if not w.hint or w.name in against:
                continue
            e = evidence(w, r.name)
            if not e:
                continue  # it passes the case, or did not run it
            if not compare(c, w.run.cases[r.name].observations, got.observations):
                matches.setdefault(r.name, []).append(w.name)
                if e.specific or e.weak >= MIN_SCALAR_EVIDENCE or (e.shared and of_a_class(w)):
                    singled.add(w.name)
    # How well each matching mistake explains this submission: the more of its failing cases
    # it matches, the better; then the fewer cases it would fail that this submission passes.
    passed = {r.name for r in results if r.verdict == Verdict.AC}
    strength: dict[str, tuple[int, int]] = {}
    for names in matches.values():
        for n in names:
            if n not in strength:
                strength[n] = (0, -_fails_among(by_name, expected, n, passed))
            strength[n] = (strength[n][0] + 1, strength[n][1])
    hints = {w.name: w.hint for w in expected.wrong}
    for r in failing:
        candidates = [n for n in matches.get(r.name, []) if n in singled]
        if not candidates:
            continue
        top = max(strength[n] for n in candidates)
        best = [n for n in candidates if strength[n] == top]
        if len(best) == 1:
            r.hint = hints[best[0]]


def _fails_among(cases: dict[str, Case], expected: Expected, wrong: str, names: set[str]) -> int:
    """How many of the cases `names` the wrong solution `wrong` fails."""
    run = next(w.run for w in expected.wrong if w.name == wrong)
    count = 0
    for name in names:
        theirs, ref = run.cases.get(name), expected.reference.cases.get(name)
        unfinished = theirs is None or ref is None or theirs.status != "ok"
        if unfinished or compare(cases[name], ref.observations, theirs.observations):  # type: ignore[union-attr]
            count += 1
    return count


def _every_case(cases: list[Case], verdict: Verdict, message: Text) -> list[CaseResult]:
    """One verdict for the whole submission, when nothing was run case by case."""
    return [
        CaseResult(
            c.name,
            c.public,
            verdict,
            0,
            c.points,
            0.0,
            message,
            description=c.description,
            ran=False,
        )
        for c in cases
    ]


def build_report(
    problem: JudgedProblem,
    cases: list[Case],
    results: list[CaseResult],
    backend: Backend,
    elapsed_ms: float,
    log: str = "",
) -> Report:
    warnings = [] if backend.is_sandbox else [msg("unsandboxed")]
    return Report(
        problem=problem.id,
        verdict=worst([r.verdict for r in results]),
        score=sum(r.score for r in results),
        max_score=sum(c.points for c in cases),
        backend=backend.name,
        time_ms=round(sum(r.time_ms or 0.0 for r in results), 1),
        cases=results,
        elapsed_ms=round(elapsed_ms, 1),
        log=log[-4000:],
        warnings=warnings,
    )


@dataclass(frozen=True)
class Progress:
    """How far a running judgement has come: `done` of its `total` cases have reported, and
    which job runs now (the public cases', or the sealed hidden cases')."""

    done: int
    total: int
    stage: Literal["public", "hidden"]


def judge_source(
    problem: P,
    source: str,
    backend: Backend,
    store: ExpectedSource[P],
    which: Which = "all",
    startup_s: float = 30.0,
    parts: Sequence[PartSource] = (),
    seal_hidden: bool = True,
    progress: Callable[[Progress], None] | None = None,
) -> Report:
    """Judge one learner submission end to end. `parts`: the code of every part it may import
    (the caller decides whose: the learner's on the site and in the kit). `seal_hidden` False
    keeps the hidden job's messages: for an author's `judge run`, who has every case anyway.

    The learner's code runs in two jobs: the public cases with a cases module cut down to them
    (`judge.core.public_cases`), whose messages and log the learner reads, and then the hidden cases
    with the whole module, a sealed job: of it the report keeps verdicts, points and what the
    judge itself says of the observations, never a word the code wrote (judge.core.grading.seal).
    Code that shares a process with the hidden cases can read them; only its observations
    leave it.

    `progress`: told as each case reports, while its job still runs, and when the hidden
    cases' job starts (a waiting learner reads "7 of 20 cases done, hidden cases running").
    Only a count leaves a sealed job this way, never what a case said."""
    started = time.perf_counter()
    cases = problem.select_cases(which)
    if len(source.encode("utf-8")) > MAX_SOURCE_BYTES:
        kib = MAX_SOURCE_BYTES // 1024
        results = _every_case(cases, Verdict.CE, msg("source_too_large", kib=kib))
        return build_report(problem, cases, results, backend, 0.0)
    public = [c for c in cases if c.public]
    hidden = [c for c in cases if not c.public]
    whole = problem.read("cases.py")
    limits = limits_for(problem, startup_s)
    solution = [SolutionSource("solution", source, LEARNER_FILE)]

    def learner_run(group: list[Case], cases_source: str, record_inputs: bool, before: int) -> RunResult:
        names = [c.name for c in group]
        stage: Literal["public", "hidden"] = "public" if record_inputs else "hidden"

        def reported(n: int) -> None:
            if progress is not None:
                progress(Progress(before + n, len(cases), stage))

        watching = reported if progress is not None else None
        return run_solutions(
            problem, solution, names, backend, limits, parts, cases_source, record_inputs, watching
        )

    def public_run() -> RunResult | None:
        # The public job records what its cases drew (shown on a failing case); the hidden never.
        return learner_run(public, public_cases_source(whole), True, 0) if public else None

    held = store.at_hand(problem, backend)
    if held is not None:  # the usual case: no thread to start and join
        expected, shown = held, public_run()
    else:
        # On a cache miss the trusted run (reference + wrong solutions) and the learner's run
        # are independent: side by side, a cold judgement costs one runner start, not two.
        with ThreadPoolExecutor(max_workers=1) as pool:
            pending = pool.submit(store.get, problem, backend)
            shown = public_run()
            try:
                expected = pending.result()
            except TrustedRunError as exc:
                results = _every_case(cases, Verdict.SE, msg("reference_failed", error=exc))
                elapsed = (time.perf_counter() - started) * 1000
                return build_report(problem, cases, results, backend, elapsed)
    graded: dict[str, CaseResult] = {}
    used: set[str] = set()
    lacking: list[str] = []
    log = ""
    if shown is not None:
        run = shown.solutions[0]
        lacking = run.missing_entries
        for r in grade_solution(public, run, shown.stop, expected):
            graded[r.name] = r
        attach_hints(public, [graded[c.name] for c in public], run, expected)
        used.update(run.parts_used)
        log = shown.log
    if hidden:
        # The public job's end decides whether the hidden one is worth running: code that does
        # not load, or a run cut off by a limit, would only be cut off again (and a time-out
        # would cost a learner twice the wait). Those cases get the public job's verdict.
        stopped = _unfinished(shown)
        if stopped is not None:
            for c in hidden:
                graded[c.name] = _not_run(c, stopped)
        else:
            if progress is not None:
                progress(Progress(len(public), len(cases), "hidden"))
            sealed = learner_run(hidden, whole, False, len(public))
            run = sealed.solutions[0]
            results = grade_solution(hidden, run, sealed.stop, expected, sealed=seal_hidden)
            lacking = lacking or run.missing_entries
            attach_hints(hidden, results, run, expected)
            for r in results:
                graded[r.name] = r
            if not seal_hidden:  # which parts it imported is the code's choice: a signal too
                used.update(run.parts_used)
    results = [graded[c.name] for c in cases]
    report = build_report(problem, cases, results, backend, (time.perf_counter() - started) * 1000, log)
    if lacking:  # named once at the top; each case that needed one says so too
        report.warnings.append(msg("entry_points_missing", names=", ".join(lacking)))
    report.parts = [
        PartUse(p.problem, p.module, p.origin if p.source is not None else "missing", p.problem in used)
        for p in parts
    ]
    return report


def _unfinished(run: RunResult | None) -> Failure | None:
    """Why the hidden cases need not run after the public ones, or None to run them. Code that
    did not load, or a run that stopped early, would be stopped again. (What the public job's
    load failure says, its line included, the learner reads on the public cases already.)"""
    if run is None:
        return None
    load = _load_failure(run.solutions[0], run.stop)
    if load is not None:
        return load
    if run.stop is not None:
        return Failure(run.stop.verdict, msg("not_run_after_public"))
    return None


def _not_run(case: Case, why: Failure) -> CaseResult:
    r = CaseResult(case.name, case.public, why.verdict, 0, case.points, 0.0, description=case.description)
    why.apply(r)
    r.ran = False
    return r
