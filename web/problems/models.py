"""Problem versions: one row per (problem id, package content hash) ever loaded."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Boolean, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from web.db import Base, UTCDateTime, utcnow


class ProblemVersion(Base):
    __tablename__ = "problem_versions"
    __table_args__ = (UniqueConstraint("problem_id", "content_hash", name="uq_problem_versions_id_hash"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    problem_id: Mapped[str] = mapped_column(String(16), index=True)
    content_hash: Mapped[str] = mapped_column(String(64))
    slug: Mapped[str] = mapped_column(String(64))
    title_zh: Mapped[str] = mapped_column(String(200))
    title_en: Mapped[str] = mapped_column(String(200))
    difficulty: Mapped[str] = mapped_column(String(16))
    chapter: Mapped[str] = mapped_column(String(64))
    tags: Mapped[list[str]] = mapped_column(JSON, default=list)
    max_score: Mapped[int]
    public_cases: Mapped[list[str]] = mapped_column(JSON, default=list)
    limits: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    statement_zh: Mapped[str] = mapped_column(Text)
    statement_en: Mapped[str] = mapped_column(Text, default="")
    starter: Mapped[str] = mapped_column(Text)
    # The version that new submissions are judged against; older ones stay for the record.
    current: Mapped[bool] = mapped_column(Boolean, default=True, index=True)
    loaded_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
