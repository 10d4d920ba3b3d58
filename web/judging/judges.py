"""The judge of each mode of job: a run (the public cases) and a submit (every case) are judged by
`judge.core.grading.judge_source`, a scratch run by `judge.scratch.run_scratch`. A worker looks
up the job's problem and the learner's parts, then calls the mode's judge; each gives the record
that is stored (web.judging.records)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from sqlalchemy.orm import Session, sessionmaker

from judge.authoring.package import Problem
from judge.backends import make_backend, require_sandbox
from judge.core.backend import Backend
from judge.core.grading import Progress, judge_source
from judge.core.interfaces import Which
from judge.core.messages import msg
from judge.core.runner.job import PartSource
from judge.core.texts import Text
from judge.expected import ExpectedStore
from judge.scratch import run_scratch
from judge.settings import JudgeSettings
from web.db import transaction
from web.judging.progress import ProgressWriter
from web.judging.queue import Claim, record_progress
from web.judging.records import StoredReport, StoredScratch, stored_report, stored_scratch, system_error
from web.notify import Notices
from web.scratch.budget import replay_budget
from web.submissions.models import Mode

log = logging.getLogger(__name__)


@dataclass(frozen=True, eq=False)
class JudgeContext:
    """The judge of a process, shared by its worker threads (and by what else runs the judge
    there: a problem's validation, the practice kit, the reference's timing)."""

    problems: dict[str, Problem]
    backend: Backend
    store: ExpectedStore
    startup_s: float


def judge_context(
    settings: JudgeSettings, problems: dict[str, Problem], serving_others: bool
) -> tuple[JudgeContext, list[Text]]:
    """The judge for workers, and what the operator should know of it. Code of other people
    needs a real sandbox unless allowed."""
    backend, warnings = make_backend(settings.backend, settings.sandbox)
    require_sandbox(backend, settings.allow_unsandboxed or not serving_others)
    if not backend.is_sandbox:
        warnings.append(msg("judging_unsandboxed"))
    store = ExpectedStore(settings.cache_dir, settings.startup_s)
    return JudgeContext(problems, backend, store, settings.startup_s), warnings


@dataclass(frozen=True, eq=False)
class Judging:
    """What a judge may use: the judge, and the database for what a judgement reads first (the
    scratch cell's reveal budget) with its bounds."""

    context: JudgeContext
    factory: sessionmaker[Session]
    scratch_replays: int
    scratch_replay_window_s: float
    notices: Notices | None = None  # told of a judgement's progress (its waiting readers read it)


@dataclass(frozen=True, eq=False)
class Job:
    """A claimed job with its problem and the parts its code may import: the learner's own
    accepted solutions, read when it is judged (a rejudge takes the parts they have then)."""

    claim: Claim
    problem: Problem
    parts: list[PartSource]


Judge = Callable[[Job, Judging], StoredReport | StoredScratch]


def judge_run(job: Job, judging: Judging) -> StoredReport:
    """The public cases, not scored; its progress written as they report."""
    return _judged(job, judging, "public")


def judge_submit(job: Job, judging: Judging) -> StoredReport:
    """Every case, scored; its progress written as they report (web.judging.progress)."""
    return _judged(job, judging, "all")


def _judged(job: Job, judging: Judging, which: Which) -> StoredReport:
    c = judging.context
    with ProgressWriter(partial(write_progress, job, judging)) as progress:
        report = judge_source(
            job.problem, job.claim.code, c.backend, c.store, which, c.startup_s, job.parts, progress=progress
        )
    return stored_report(report.to_dict())


def write_progress(job: Job, judging: Judging, progress: Progress) -> None:
    """Record how many cases have reported. A failed write costs the reader the line, never
    the judgement."""
    stage = {"done": progress.done, "total": progress.total, "stage": progress.stage}
    try:
        record_progress(judging.factory, job.claim, stage, judging.notices)
    except Exception:
        log.warning("submission %s: progress not written", job.claim.submission_id, exc_info=True)


def judge_scratch(job: Job, judging: Judging) -> StoredScratch:
    """The learner's code, then their snippet; never scored (web.scratch). The reference answers
    only as many of its calls as the learner's reveal budget has left."""
    c, problem = judging.context, job.problem
    expected = c.store.get(problem, c.backend)
    with transaction(judging.factory) as session:
        budget = replay_budget(
            session,
            job.claim.user_id,
            problem.id,
            judging.scratch_replays,
            judging.scratch_replay_window_s,
        )
    result = run_scratch(
        problem,
        job.claim.code,
        job.claim.snippet,
        c.backend,
        expected,
        c.startup_s,
        job.parts,
        problem.reference_parts(),
        budget,
    )
    return stored_scratch(result.to_dict())


JUDGES: dict[Mode, Judge] = {Mode.RUN: judge_run, Mode.SUBMIT: judge_submit, Mode.SCRATCH: judge_scratch}


def withdrawn(claim: Claim) -> StoredReport | StoredScratch:
    """The result of a job whose problem this process no longer offers: a system error."""
    gone = msg("problem_withdrawn", problem=claim.problem_id)
    return system_error(claim.problem_id, gone, claim.mode == Mode.SCRATCH)
