"""Scores: a user's best on a problem, recomputed from their judged submissions, and the
leaderboard (total, then problems solved, then who got there first)."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel
from sqlalchemy import Integer, case, cast, delete, exists, func, literal, select
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
    # The newest package version (problem.toml) the best was reached on; null if not recorded.
    best_version: int | None


class LeaderboardRow(BaseModel):
    rank: int
    # The learner's display name, else their username (they choose it in their settings; an
    # account that chose to stay off the board is not listed at all).
    name: str
    you: bool = False  # the reader's own row
    score: int
    solved: int
    last_improved_at: datetime | None


# A submission's score for the learner's best: what a rejudge kept if it lowered the result
# (web.judging.queue.rejudge), else its own; and the package version that score was judged on.
_COUNTED = func.coalesce(Submission.kept_score, Submission.score)
_KEPT = Submission.kept_score.is_not(None)
_COUNTED_MAX = case((_KEPT, Submission.kept_max_score), else_=Submission.max_score)
_COUNTED_VERSION = case((_KEPT, Submission.kept_version), else_=ProblemVersion.package_version)


def refresh_score(session: Session, user_id: int, problem_id: str) -> Score | None:
    """Best score over the user's judged `submit`s, in the caller's transaction.

    Recomputed rather than incremented, so a result written twice could never count twice. A
    rejudge that judges a submission lower keeps its earlier result (`kept_score`), which still
    counts here: a rejudge never silently lowers a best. A submission stopped by a part its
    author has not solved (`blocked_by`) is no attempt: with only such ones, there is no row.
    """
    counted = (
        Submission.user_id == user_id,
        Submission.problem_id == problem_id,
        Submission.mode == Mode.SUBMIT,
        Submission.blocked_by.is_(None),
    )
    if session.scalar(select(exists().where(*counted))) is False:
        session.execute(delete(Score).where(Score.user_id == user_id, Score.problem_id == problem_id))
        return None
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
    judged = (
        *counted,
        # Judged at least once: a submission waiting for a rejudge keeps its last score.
        Submission.score.is_not(None),
    )
    best = session.execute(
        select(Submission.id, _COUNTED, _COUNTED_MAX, Submission.created_at)
        .where(*judged)
        .order_by(_COUNTED.desc(), Submission.created_at, Submission.id)
        .limit(1)
    ).first()
    if best is None:
        score.best_score, score.solved, score.improved_at, score.best_submission_id = 0, False, None, None
        score.best_version = None
        return score
    sub_id, value, max_score, created_at = best
    score.best_score = int(value or 0)
    score.max_score = int(max_score or 0)
    score.solved = score.max_score > 0 and score.best_score >= score.max_score
    score.improved_at = created_at if score.best_score > 0 else None
    score.best_submission_id = sub_id
    # The newest version reached the best on: accepted again after a change, the learner is current.
    score.best_version = session.scalar(
        select(func.max(_COUNTED_VERSION))
        .select_from(Submission)
        .outerjoin(ProblemVersion, ProblemVersion.id == Submission.problem_version_id)
        .where(*judged, literal(score.best_score) == _COUNTED)
    )
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
            best_version=s.best_version,
        )
        for s in rows
    ]


def leaderboard(db: Session, limit: int, reader: User | None = None) -> list[LeaderboardRow]:
    offered = select(ProblemVersion.problem_id).where(ProblemVersion.current.is_(True))
    total = func.sum(Score.best_score).label("total")
    solved = func.sum(cast(Score.solved, Integer)).label("solved")
    last = func.max(Score.improved_at).label("last")
    name = func.coalesce(User.display_name, User.username).label("name")
    rows = db.execute(
        select(User.id, name, total, solved, last)
        .join(Score, Score.user_id == User.id)
        .where(Score.problem_id.in_(offered), Score.best_score > 0, User.on_leaderboard.is_(True))
        .group_by(User.id, User.username, User.display_name)
        .order_by(total.desc(), solved.desc(), last.asc(), User.username)
        .limit(limit)
    ).all()
    out: list[LeaderboardRow] = []
    for i, (user_id, shown, score, n_solved, last_at) in enumerate(rows):
        key = (score, n_solved, last_at)
        prev = out[-1] if out else None
        same = prev is not None and (prev.score, prev.solved, prev.last_improved_at) == key
        rank = prev.rank if same and prev else i + 1
        out.append(
            LeaderboardRow(
                rank=rank,
                name=shown,
                you=reader is not None and reader.id == user_id,
                score=int(score or 0),
                solved=int(n_solved or 0),
                last_improved_at=last_at,
            )
        )
    return out
