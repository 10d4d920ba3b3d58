"""Recomputing a user's best score on a problem from their judged submissions."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from web.scores.models import Score
from web.submissions.models import Submission


def refresh_score(session: Session, user_id: int, problem_id: str) -> Score:
    """Best score over the user's judged `submit`s, in the caller's transaction.

    Recomputed rather than incremented, so a rejudge that lowers a score is honoured and a
    result written twice could never count twice.
    """
    # Two workers may finish the same user's submissions at once: create the row without a
    # race (INSERT ... ON CONFLICT DO NOTHING), then lock it, so the second waits for the first.
    dialect = session.get_bind().dialect.name
    insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
    session.execute(insert(Score).values(user_id=user_id, problem_id=problem_id).on_conflict_do_nothing())
    score = session.scalar(
        select(Score)
        .where(Score.user_id == user_id, Score.problem_id == problem_id)
        .with_for_update()
        .execution_options(populate_existing=True)
    )
    assert score is not None
    # Read after the lock: a concurrent result is committed by now and counts.
    best = session.execute(
        select(Submission.id, Submission.score, Submission.max_score, Submission.created_at)
        .where(
            Submission.user_id == user_id,
            Submission.problem_id == problem_id,
            Submission.mode == "submit",
            # Judged at least once: a submission waiting for a rejudge keeps its last score.
            Submission.score.is_not(None),
        )
        .order_by(Submission.score.desc(), Submission.created_at, Submission.id)
        .limit(1)
    ).first()
    if best is None:
        score.best_score, score.solved, score.improved_at, score.best_submission_id = 0, False, None, None
        return score
    sub_id, value, max_score, created_at = best
    score.best_score = int(value or 0)
    score.max_score = int(max_score or 0)
    score.solved = score.max_score > 0 and score.best_score >= score.max_score
    score.improved_at = created_at if score.best_score > 0 else None
    score.best_submission_id = sub_id
    return score
