"""How many of the reference's answers a learner has left on a problem in the scratch cell.

Each answer shows the reference's output on an input the learner chose. One answer teaches;
hundreds would tabulate the reference, so they are counted per learner and problem over a
window, from the scratch runs themselves: a run keeps in its stored result how many calls the
reference answered (`replayed`), and the runs stay while their window counts them
(web.scratch.service). Runs at the same moment may together go over by one run's calls at most
(judge.core.runner.scratch.MAX_CALLS); the per-account cap on running jobs bounds how many.
"""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from judge.scratch import Budget
from web.db import utcnow
from web.judging.records import UnreadableRecord, read_scratch
from web.submissions.models import Mode, Submission, SubmissionStatus

log = logging.getLogger(__name__)


def replayed(report: Any) -> int:
    """The reference's answers in one stored scratch result (web.judging.records counts them
    for results stored before the count was kept). An unreadable one counts none, as before
    results were records: the budget is a bound on teaching, not a lock."""
    try:
        return read_scratch(report).replayed
    except UnreadableRecord as exc:
        log.error("a scratch run's result in the reveal budget: %s", exc)
        return 0


def replay_budget(session: Session, user_id: int, problem_id: str, limit: int, window_s: float) -> Budget:
    since = utcnow() - timedelta(seconds=window_s)
    reports = session.scalars(
        select(Submission.report).where(
            Submission.user_id == user_id,
            Submission.problem_id == problem_id,
            Submission.mode == Mode.SCRATCH,
            Submission.status == SubmissionStatus.DONE,
            Submission.created_at >= since,
        )
    )
    used = sum(replayed(r) for r in reports)
    return Budget(left=max(limit - used, 0), limit=limit, window_s=window_s)
