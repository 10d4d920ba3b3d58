"""Each user's best score per problem, kept up to date in the transaction that ends a judgement."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column

from web.db import Base, UTCDateTime


class Score(Base):
    __tablename__ = "scores"

    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), primary_key=True)
    problem_id: Mapped[str] = mapped_column(String(16), primary_key=True)
    best_score: Mapped[int] = mapped_column(default=0)
    max_score: Mapped[int] = mapped_column(default=0)
    solved: Mapped[bool] = mapped_column(default=False)
    # When the best score was first reached (its submission's time): the leaderboard's tie-break.
    improved_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)
    best_submission_id: Mapped[int | None] = mapped_column(
        ForeignKey("submissions.id", ondelete="SET NULL"), default=None
    )
    # The newest package version (problem.toml's `version`) on which a submission reached the
    # best score (migration 0010): the problem list tells a learner accepted on an older one what
    # changed since. NULL: no score yet, or judged on versions recorded before 0010.
    best_version: Mapped[int | None] = mapped_column(default=None)
