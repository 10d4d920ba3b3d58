"""What a learner may read once they have solved a problem: its solutions, why each is right,
and their own accepted submission's time beside the reference's.

The reference's time is measured the way a learner's is: reference.py judged as a Submit, in
this process's judge (same backend, runner mode, limits and cases), alone in its runner, not
inside the trusted run (which shares its process with the wrong solutions and, on a cold cache,
runs beside a learner's judgement). One run's times swing by the first call of each torch
kernel, so it is judged MEASUREMENTS times (fewer for a long one) and each case keeps its
median. That is done once per package version and runtime and kept in `reference_timings`, so
every later reader of the version sees the same numbers.
"""

from __future__ import annotations

import hashlib
import logging
import statistics
import threading
import time

from pydantic import BaseModel
from sqlalchemy import exists, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from judge.authoring.package import Problem
from judge.authoring.solutions import Solution, read_solutions
from judge.core.backend import Backend
from judge.core.grading import judge_source
from judge.core.report import Report
from judge.core.verdicts import Verdict
from judge.expected import ExpectedStore
from web.auth.models import User
from web.errors import N_, ApiError, not_found
from web.judging.judges import JudgeContext
from web.judging.records import UnreadableRecord, read_report
from web.problems.models import ProblemVersion
from web.solutions.models import ReferenceTiming
from web.submissions.models import Mode, Submission, SubmissionStatus

log = logging.getLogger(__name__)

MEASUREMENTS = 3
# A long reference (217, the whole model) varies less from run to run and costs more to judge:
# no new run starts once this much time went into measuring.
MEASURING_BUDGET_S = 10.0
# One measurement at a time per process: two readers of a new version wait for one another
# rather than judge the reference twice over (the table's unique key stops a second process).
_measuring = threading.Lock()


class SolutionOut(BaseModel):
    kind: str  # reference or accepted
    name: str  # reference, accepted/<stem>
    code: str
    note: str  # why it is right, in the reader's language ("" if the package has no note)


class CaseTime(BaseModel):
    name: str
    yours_ms: float
    reference_ms: float


class Timing(BaseModel):
    """An accepted submission's time beside the reference's, over the cases both were timed on."""

    submission_id: int
    backend: str
    yours_ms: float
    reference_ms: float
    ratio: float | None  # yours / reference; None when the reference took no measurable time
    # The median over cases of yours / reference: a total is swayed by one slow first call, a
    # typical case is not.
    typical_ratio: float | None
    cases: list[CaseTime]


class SolutionsOut(BaseModel):
    problem: str
    solutions: list[SolutionOut]
    # Null when there is nothing to compare: no accepted submit of a version whose reference
    # time is known here (an older version, or a server that judges nothing).
    timing: Timing | None


def _accepted(db: Session, user: User, problem_id: str) -> bool:
    return bool(
        db.scalar(
            select(
                exists().where(
                    Submission.user_id == user.id,
                    Submission.problem_id == problem_id,
                    Submission.mode == Mode.SUBMIT,
                    Submission.verdict == Verdict.AC,
                )
            )
        )
    )


def _offered(problems: dict[str, Problem], problem_id: str) -> Problem:
    problem = problems.get(problem_id)
    if problem is None:
        raise not_found("problem", problem_id)
    return problem


def _out(solution: Solution, lang: str) -> SolutionOut:
    note = solution.note.get(lang) if solution.note is not None else ""
    return SolutionOut(kind=solution.kind, name=solution.name, code=solution.code, note=note)


def read(
    db: Session,
    problems: dict[str, Problem],
    judge: JudgeContext | None,
    user: User,
    problem_id: str,
    lang: str,
    submission_id: int | None,
) -> SolutionsOut:
    """The solutions of a problem the user has an accepted submit of, else 403; the timing is
    measured on `judge` (None: this process judges nothing, and shows what another measured)."""
    problem = _offered(problems, problem_id)
    if not _accepted(db, user, problem.id):
        raise ApiError(
            403,
            "not_solved_yet",
            N_("The solutions open once you have an accepted submission of this problem."),
        )
    found = read_solutions(problem)
    if found.problems:  # the site shows the code anyway; validate is where a gap is refused
        log.warning("problem %s: %s", problem.id, "; ".join(found.problems))
    return SolutionsOut(
        problem=problem.id,
        solutions=[_out(s, lang) for s in found.all],
        timing=timing(db, judge, user, problem, submission_id),
    )


def _submission(db: Session, user: User, problem: Problem, submission_id: int | None) -> Submission | None:
    """The accepted submit to compare: the one asked for (it must be the user's), else the latest."""
    if submission_id is not None:
        sub = db.get(Submission, submission_id)
        if sub is None or sub.user_id != user.id or sub.problem_id != problem.id:
            raise not_found("submission", submission_id)
        done = sub.status == SubmissionStatus.DONE
        return sub if done and sub.mode == Mode.SUBMIT and sub.verdict == Verdict.AC else None
    return db.scalar(
        select(Submission)
        .where(
            Submission.user_id == user.id,
            Submission.problem_id == problem.id,
            Submission.mode == Mode.SUBMIT,
            Submission.verdict == Verdict.AC,
        )
        .order_by(Submission.id.desc())
        .limit(1)
    )


def timing(
    db: Session, judge: JudgeContext | None, user: User, problem: Problem, submission_id: int | None
) -> Timing | None:
    sub = _submission(db, user, problem, submission_id)
    if sub is None or sub.problem_version_id is None or not sub.report:
        return None
    try:
        report = read_report(sub.report)
    except UnreadableRecord as exc:  # nothing to compare; the submission's page says why
        log.error("submission %s: %s", sub.id, exc)
        return None
    measured = reference_timing(db, judge, problem, sub.problem_version_id)
    if measured is None:
        return None
    backend, reference = measured
    cases = [
        CaseTime(name=c.name, yours_ms=c.time_ms, reference_ms=reference[c.name])
        for c in report.cases
        if c.name in reference and c.time_ms is not None
    ]
    if not cases:
        return None
    ratios = [c.yours_ms / c.reference_ms for c in cases if c.reference_ms > 0]
    yours = round(sum(c.yours_ms for c in cases), 1)
    ref = round(sum(c.reference_ms for c in cases), 1)
    return Timing(
        submission_id=sub.id,
        backend=backend,
        yours_ms=yours,
        reference_ms=ref,
        ratio=round(yours / ref, 2) if ref > 0 else None,
        typical_ratio=round(statistics.median(ratios), 2) if ratios else None,
        cases=cases,
    )


def runtime_key(runtime_id: str) -> str:
    return hashlib.sha256(runtime_id.encode()).hexdigest()[:32]


def reference_timing(
    db: Session, judge: JudgeContext | None, problem: Problem, version_id: int
) -> tuple[str, dict[str, float]] | None:
    """(backend, case -> ms) of the reference on package version `version_id`, or None.

    Measured here the first time (`measure_reference`). Only the loaded version can be
    measured; an older one has a time only if it was measured while it was current. A process
    that judges nothing shows what a judging one measured.
    """
    rows = select(ReferenceTiming).where(ReferenceTiming.problem_version_id == version_id)
    if judge is None:
        row = db.scalar(rows.order_by(ReferenceTiming.id.desc()).limit(1))
        return (row.backend, row.cases) if row is not None else None
    runtime = runtime_key(judge.backend.runtime_id())
    mine = rows.where(ReferenceTiming.runtime == runtime)
    row = db.scalar(mine)
    if row is not None:
        return row.backend, row.cases
    current = db.scalar(
        select(ProblemVersion.id).where(
            ProblemVersion.problem_id == problem.id, ProblemVersion.content_hash == problem.content_hash
        )
    )
    if current != version_id:
        return None
    db.rollback()  # hold no transaction (nor, on SQLite, a read lock) while the judge runs
    with _measuring:
        row = db.scalar(mine)
        if row is not None:
            return row.backend, row.cases
        cases = measure_reference(problem, judge.backend, judge.store, judge.startup_s)
        if cases is None:
            return None
        backend = judge.backend.name
        db.add(ReferenceTiming(problem_version_id=version_id, runtime=runtime, backend=backend, cases=cases))
        try:
            db.commit()
        except IntegrityError:  # another process measured it first: show theirs, as everyone will
            db.rollback()
            row = db.scalar(mine)
            if row is not None:
                return row.backend, row.cases
        return backend, cases


def measure_reference(
    problem: Problem, backend: Backend, store: ExpectedStore, startup_s: float
) -> dict[str, float] | None:
    """Each case's median time of reference.py judged as a learner's Submit (with the reference
    parts) MEASUREMENTS times, or fewer within MEASURING_BUDGET_S; None if it is not accepted (a
    broken package: nothing to compare with)."""
    source = problem.reference.source()
    parts = problem.reference_parts()
    runs: list[Report] = []
    started = time.monotonic()
    while len(runs) < MEASUREMENTS and (not runs or time.monotonic() - started < MEASURING_BUDGET_S):
        runs.append(judge_source(problem, source, backend, store, "all", startup_s, parts))
    if any(r.verdict != Verdict.AC for r in runs):
        log.warning("problem %s: the reference is not accepted when judged; no time to compare", problem.id)
        return None
    times: dict[str, list[float]] = {}
    for run in runs:
        for case in run.cases:
            times.setdefault(case.name, []).append(case.time_ms or 0.0)
    return {name: round(statistics.median(ms), 3) for name, ms in times.items()}
