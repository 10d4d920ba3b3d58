"""How many of the reference's answers a learner has left on a problem in the scratch cell.

Each answer shows the reference's output on an input the learner chose. One answer teaches;
hundreds would tabulate the reference, so they are counted per learner and problem over a
window, from the scratch runs themselves: a run keeps in its stored result how many calls the
reference answered (`replayed`), and the runs stay while their window counts them
(web.scratch.service). Runs at the same moment may together go over by one run's calls at most
(judge.core.runner.scratch.MAX_CALLS); the per-account cap on running jobs bounds how many.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from judge.scratch import Budget
from web.db import utcnow
from web.submissions.models import Mode, Submission, SubmissionStatus


def replayed(report: dict[str, Any] | None) -> int:
    """The reference's answers in one stored scratch result (results stored before the count
    was kept: the calls that show a reference value)."""
    if not isinstance(report, dict):
        return 0
    count = report.get("replayed")
    if isinstance(count, int) and not isinstance(count, bool):
        return max(count, 0)
    calls = report.get("calls")
    return (
        sum(1 for c in calls if isinstance(c, dict) and c.get("reference") is not None)
        if isinstance(calls, list)
        else 0
    )


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
