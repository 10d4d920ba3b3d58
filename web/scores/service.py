"""Recomputing a user's best score on a problem from their judged submissions."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from web.scores.models import Score
from web.submissions.models import Submission


def refresh_score(session: Session, user_id: int, problem_id: str) -> Score:
    """Best score over the user's judged `submit`s, in the caller's transaction.

    Recomputed rather than incremented, so a rejudge that lowers a score is honoured and a
    result written twice could never count twice.
    """
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
    score = session.get(Score, (user_id, problem_id))
    if score is None:
        score = Score(user_id=user_id, problem_id=problem_id)
        session.add(score)
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
