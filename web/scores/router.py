"""My best scores, and the leaderboard (total, then problems solved, then who got there first)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from web.deps import DbDep, OptionalUserDep, UserDep
from web.scores import service
from web.scores.service import LeaderboardRow, MyScore

router = APIRouter(prefix="/api", tags=["scores"])


@router.get("/me/scores", response_model=list[MyScore])
def my_scores(user: UserDep, db: DbDep) -> list[MyScore]:
    return service.my_scores(db, user)


@router.get("/leaderboard", response_model=list[LeaderboardRow])
def leaderboard(
    db: DbDep, reader: OptionalUserDep, limit: Annotated[int, Query(ge=1, le=1000)] = 100
) -> list[LeaderboardRow]:
    """Learners who chose to be listed, under the name they chose (settings); `you` marks the
    reader's own row."""
    return service.leaderboard(db, limit, reader)
