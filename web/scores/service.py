"""Scores: a user's best on a problem, recomputed from their judged submissions, and the
leaderboard (total, then problems solved, then who got there first)."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel
from sqlalchemy import Integer, cast, func, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from web.auth.models import User
from web.problems.models import ProblemVersion
from web.scores.models import Score
from web.submissions.models import Mode, Submission


class MyScore(BaseModel):
    problem_id: str
    best_score: int
    max_score: int
    solved: bool
    improved_at: datetime | None


class LeaderboardRow(BaseModel):
    rank: int
    username: str
    score: int
    solved: int
    last_improved_at: datetime | None


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
            Submission.mode == Mode.SUBMIT,
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


def my_scores(db: Session, user: User) -> list[MyScore]:
    rows = db.scalars(select(Score).where(Score.user_id == user.id).order_by(Score.problem_id)).all()
    return [
        MyScore(
            problem_id=s.problem_id,
            best_score=s.best_score,
            max_score=s.max_score,
            solved=s.solved,
            improved_at=s.improved_at,
        )
        for s in rows
    ]


def leaderboard(db: Session, limit: int) -> list[LeaderboardRow]:
    offered = select(ProblemVersion.problem_id).where(ProblemVersion.current.is_(True))
    total = func.sum(Score.best_score).label("total")
    solved = func.sum(cast(Score.solved, Integer)).label("solved")
    last = func.max(Score.improved_at).label("last")
    rows = db.execute(
        select(User.username, total, solved, last)
        .join(Score, Score.user_id == User.id)
        .where(Score.problem_id.in_(offered), Score.best_score > 0)
        .group_by(User.id, User.username)
        .order_by(total.desc(), solved.desc(), last.asc(), User.username)
        .limit(limit)
    ).all()
    out: list[LeaderboardRow] = []
    for i, (username, score, n_solved, last_at) in enumerate(rows):
        key = (score, n_solved, last_at)
        prev = out[-1] if out else None
        same = prev is not None and (prev.score, prev.solved, prev.last_improved_at) == key
        rank = prev.rank if same and prev else i + 1
        out.append(
            LeaderboardRow(
                rank=rank,
                username=username,
                score=int(score or 0),
                solved=int(n_solved or 0),
                last_improved_at=last_at,
            )
        )
    return out
