"""Run solutions through a backend and turn the raw outcome into per-case runner results.

Nothing here decides correctness: that happens in grading, against the reference. This
module says what the runner reported for each case, and, for cases it never reported, why
the process stopped (time, memory, output, a crash, or the judge's own failure).
"""

from __future__ import annotations

import signal
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from judge.core.backend import Backend, Limits, Outcome, ResultWatch, RunnerSpec
from judge.core.frames import (
    NO_SOLUTION,
    CaseFrame,
    CaseOutcome,
    Done,
    FrameError,
    Hello,
    JudgementFrame,
    Load,
    parse_judgement_frame,
)
from judge.core.interfaces import JudgedProblem
from judge.core.messages import msg
from judge.core.observations import ObservationError, decode
from judge.core.protocol import SAFETENSORS_DTYPES, HeadScanner, ParsedStream, StreamLimits, parse_stream
from judge.core.results import CaseRun, RunResult, SolutionRun, Stop
from judge.core.runner.job import PartSource, RunnerJob, SolutionSource, marshalled_cases
from judge.core.runner.main import EXIT_INTERNAL
from judge.core.texts import same
from judge.core.verdicts import Verdict

RETURNABLE_DTYPES = ", ".join(str(dtype).removeprefix("torch.") for dtype, _ in SAFETENSORS_DTYPES.values())
LOG_TAIL = 2000

# The judge's runner, as every backend is built to run it: cold, `python -m judge.core.runner`
# (which prepares itself, then runs the job on stdin); pooled, a fork server that called
# prepare() once and calls warm() and then main() in each job's child.
RUNNER = RunnerSpec(
    cold_args=("-m", "judge.core.runner"),
    preload="judge.core.runner.main:prepare",
    entry="judge.core.runner.main:main",
    warm="judge.core.runner.main:warm",
)


def limits_for(problem: JudgedProblem, startup_s: float) -> Limits:
    spec = problem.spec.limits
    return Limits(
        startup_s=startup_s,
        wall_s=spec.time_s,
        cpu_s=startup_s + spec.time_s,
        memory_bytes=spec.memory_mb * 1024 * 1024,
        log_bytes=spec.output_kb * 1024,
    )


def batch_limits(base: Limits, n: int) -> Limits:
    """Limits for one trusted process that runs `n` of the author's solutions in turn."""
    return replace(base, wall_s=base.wall_s * n, cpu_s=base.cpu_s + base.wall_s * n, log_bytes=1024 * 1024)


def run_solutions(
    problem: JudgedProblem,
    solutions: list[SolutionSource],
    case_names: list[str],
    backend: Backend,
    limits: Limits,
    parts: Sequence[PartSource] = (),
    cases_source: str | None = None,
    record_inputs: bool = False,
    on_case: Callable[[int], None] | None = None,
) -> RunResult:
    """`cases_source`: the cases module the job carries (the package's whole cases.py unless
    given: a job whose output reaches the learner gets judge.core.public_cases' text instead).
    `record_inputs`: the runner records what each case draws (for the public cases' job only).
    `on_case(n)`: told, while the job runs, that `n` of its cases have reported."""
    if cases_source is None:
        cases_source = problem.read("cases.py")
    job = RunnerJob(
        problem=problem.id,
        entry_points=list(problem.spec.entry_points),
        cases_source=cases_source,
        cases_code=marshalled_cases(cases_source),
        case_names=case_names,
        solutions=solutions,
        forbidden=list(problem.spec.forbidden),
        parts=list(parts),
        data=dict(problem.data()),  # raw, after the job's JSON (judge.core.runner.job)
        record_inputs=record_inputs,
    )
    watch = None if on_case is None else cases_reported(case_names, on_case)
    outcome = backend.run(job.to_bytes(), limits, watch)
    stream_limits = StreamLimits(max_bytes=limits.result_bytes)
    parsed = parse_stream(outcome.result, stream_limits)
    return interpret(parsed, outcome, len(solutions), limits, case_names, problem.spec.entry_points)


def cases_reported(case_names: Sequence[str], on_case: Callable[[int], None]) -> ResultWatch:
    """A watch on a job's result stream that calls `on_case(n)` each time one more of the job's
    cases has reported. The stream is the learner's to write to, so a forged frame can move
    the count (within the job's own case names, each once): it is shown while waiting, never
    judged."""
    scanner = HeadScanner()
    wanted = set(case_names)
    seen: set[str] = set()

    def watch(chunk: bytes) -> None:
        before = len(seen)
        for head in scanner.feed(chunk):
            try:
                record = parse_judgement_frame(head)
            except Exception:  # an unreadable head is not a reported case
                continue
            if isinstance(record, CaseFrame) and record.case in wanted:
                seen.add(record.case)
        if len(seen) > before:
            on_case(len(seen))

    return watch


def interpret(
    parsed: ParsedStream,
    outcome: Outcome,
    n_solutions: int,
    limits: Limits,
    case_names: Sequence[str] | None = None,
    entry_points: Sequence[str] | None = None,
) -> RunResult:
    """`case_names`: the cases the job asked for; with them, a `done` frame counts only once
    every solution's load and every loaded solution's cases were reported. `entry_points`: the
    problem's; a load frame's missing ones are believed only among them."""
    runs = [SolutionRun() for _ in range(n_solutions)]
    hello: Hello | None = None
    finished = False
    stream_error = parsed.error
    for frame in parsed.frames:
        # Frames are untrusted (learner code shares the runner's process and can write to its
        # stream): any failure to make sense of one is a damaged stream, never the judge's error.
        try:
            record = parse_judgement_frame(frame.head)
            problem = _record(record, frame.tensors, runs, entry_points)
        except (FrameError, ObservationError) as exc:
            record, problem = None, str(exc)
        except Exception:  # whatever a forged frame provokes, the stream is damaged
            record, problem = None, "a frame cannot be read"
        if problem is not None:
            stream_error = stream_error or problem
            break
        if isinstance(record, Hello):
            hello = record
        finished = finished or isinstance(record, Done)
    started = any(r.load_status is not None for r in runs)
    if finished and started and case_names is not None and not _complete(runs, case_names):
        # The runner writes `done` only after all of that: this one came from learner code
        # (which can write to the stream), and the run ended before the runner finished. Not
        # finished, then: the learner's early end (RE), never cases the runner "forgot" (SE).
        finished = False
    stop = classify_stop(outcome, hello is not None, finished, stream_error, limits, started)
    if stop is not None and stop.verdict == Verdict.TLE:
        stop.ran_ms = cut_off_ms(outcome, runs)
    return RunResult(runs, outcome, stop, hello)


def _complete(runs: list[SolutionRun], case_names: Sequence[str]) -> bool:
    """Whether the stream reports everything a finished runner reports for the job."""
    for run in runs:
        if run.load_status in (None, "started"):
            return False
        if run.load_status == "ok" and any(name not in run.cases for name in case_names):
            return False
    return True


def cut_off_ms(outcome: Outcome, runs: list[SolutionRun]) -> float:
    """The time the case cut off by the clock had run: the run's time since the runner was ready
    (when its clock starts) less what the reported cases took. A time-out so reads about the
    time limit, not the milliseconds of the cases that finished before it."""
    since_ready = outcome.wall_s - (outcome.ready_s or 0.0)
    reported = sum(c.time_ms for r in runs for c in r.cases.values())
    return round(max(0.0, since_ready * 1000 - reported), 1)


def _record(
    frame: JudgementFrame,
    tensors: dict[str, Any],
    runs: list[SolutionRun],
    entry_points: Sequence[str] | None = None,
) -> str | None:
    """Record one frame in `runs`. Returns what is wrong with it (None if nothing)."""
    if isinstance(frame, (Hello, Done)):
        return None
    if not frame.solution < len(runs):
        return NO_SOLUTION
    run = runs[frame.solution]
    if isinstance(frame, Load):
        run.load_status, run.load_message, run.load_line = frame.status, frame.message, frame.line
        run.parts_used = list(frame.parts)
        # Only a loaded solution's: one that lacks them all did not load (its message says so).
        # Untrusted like the rest: only the problem's own entry points are named.
        if frame.status == "ok":
            run.missing_entries = [n for n in frame.missing if entry_points is None or n in entry_points]
        elif frame.status == "ce" and frame.not_callable:
            run.load_text = msg("entry_points_not_callable", names=", ".join(frame.not_callable))
        elif frame.status == "ce" and frame.missing and not frame.message:
            run.load_text = msg("no_entry_points", names=", ".join(frame.missing))
        if frame.missing_part is not None:
            run.missing_part = frame.missing_part
        return None
    try:
        run.cases[frame.case] = case_run(frame.outcome, tensors, run.missing_entries)
    except ObservationError as exc:
        return f"case {frame.case[:100]}: {exc}"
    return None


def case_run(outcome: CaseOutcome, tensors: dict[str, Any], missing_entries: Sequence[str] = ()) -> CaseRun:
    """A case's outcome as the judge takes it (its observations decoded with the protocol's caps),
    with the inputs the runner recorded for it (the public cases' job only)."""
    return replace(_case_run(outcome, tensors, missing_entries), inputs=outcome.inputs)


def _case_run(outcome: CaseOutcome, tensors: dict[str, Any], missing_entries: Sequence[str] = ()) -> CaseRun:
    """`missing_entries`: the entry points the solution's load frame said it lacks; a case that
    failed on one of those is worded by the judge, naming it (any other name is not believed)."""
    elapsed, message = outcome.time_ms, outcome.message
    if outcome.status == "ok":
        return CaseRun("ok", elapsed, decode(outcome.obs, tensors))
    if outcome.status == "forbidden":
        return CaseRun("forbidden", elapsed, api=outcome.api if outcome.api is not None else "?")
    entry, what = outcome.missing_entry, outcome.unreturnable
    if outcome.status == "error" and entry is not None and entry in missing_entries:
        text = msg("entry_point_missing_case", name=entry)
        return CaseRun("error", elapsed, message=message, text=text, missing_entry=entry)
    if outcome.status == "error" and what is not None:
        if what.startswith("torch."):
            text = msg("unreturnable_dtype", dtype=what, allowed=RETURNABLE_DTYPES)
        else:
            text = msg("unreturnable_layout", kind=what)
        return CaseRun("error", elapsed, message=message, text=text)
    return CaseRun(
        outcome.status, elapsed, message=message, line=outcome.line, missing_part=outcome.missing_part
    )


def classify_stop(
    outcome: Outcome,
    ready: bool,
    finished: bool,
    stream_error: str | None,
    limits: Limits,
    code_started: bool = False,
) -> Stop | None:
    """Why the run ended early, in words a learner understands; None for a normal finish."""
    tail = outcome.log.decode("utf-8", errors="replace")[-LOG_TAIL:].strip()
    more = same(f":\n{tail}" if tail else "")
    if outcome.system_error:
        return Stop(Verdict.SE, msg("sandbox_failed", error=outcome.system_error))
    if outcome.startup_timed_out or not ready:
        return Stop(
            Verdict.SE, msg("runner_not_ready" if outcome.startup_timed_out else "runner_failed_early") + more
        )
    if outcome.result_overflow:
        return Stop(Verdict.OLE, msg("outputs_too_large", mib=limits.result_bytes // (1024 * 1024)))
    if outcome.log_overflow:
        return Stop(Verdict.OLE, msg("printed_too_much", kib=limits.log_bytes // 1024))
    if outcome.timed_out or outcome.cpu_exceeded:
        cpu = outcome.cpu_exceeded and not outcome.timed_out
        return Stop(Verdict.TLE, msg("out_of_cpu" if cpu else "out_of_time", limit=f"{limits.wall_s:g}"))
    if outcome.memory_exceeded:
        return Stop(Verdict.MLE, msg("out_of_memory", mib=limits.memory_bytes // (1024 * 1024)))
    if outcome.exit_code == EXIT_INTERNAL and code_started:
        # Submitted code shares the runner's process; once it ran, it may be what broke it.
        return Stop(Verdict.RE, msg("runner_broken") + more)
    if outcome.exit_code == EXIT_INTERNAL:
        return Stop(Verdict.SE, msg("runner_internal") + more)
    if outcome.signal is not None:
        try:
            name = signal.Signals(outcome.signal).name
        except ValueError:
            name = f"signal {outcome.signal}"
        return Stop(Verdict.RE, msg("killed_by_signal", name=name))
    if stream_error:
        return Stop(Verdict.RE, msg("stream_damaged", why=stream_error))
    if not finished:
        return Stop(Verdict.RE, msg("ended_early", code=outcome.exit_code))
    return None
