"""My best scores, and the leaderboard (total, then problems solved, then who got there first)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Query
from pydantic import BaseModel
from sqlalchemy import Integer, cast, func, select

from web.auth.models import User
from web.deps import DbDep, UserDep
from web.problems.models import ProblemVersion
from web.scores.models import Score

router = APIRouter(prefix="/api", tags=["scores"])


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


@router.get("/me/scores", response_model=list[MyScore])
def my_scores(user: UserDep, db: DbDep) -> list[MyScore]:
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


@router.get("/leaderboard", response_model=list[LeaderboardRow])
def leaderboard(db: DbDep, limit: Annotated[int, Query(ge=1, le=1000)] = 100) -> list[LeaderboardRow]:
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
