"""Problem versions: one row per (problem id, package content hash) ever loaded."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import JSON, Boolean, ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from web.db import Base, UTCDateTime, one_of, utcnow


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
    # The chapter as one string, "03 RMSNorm" (the API's `chapter`). The course's chapter and the
    # prerequisites are set again at every sync on the current version: course.toml may rename or
    # reorder chapters without changing any package (nor its content hash).
    chapter: Mapped[str] = mapped_column(String(64))
    chapter_number: Mapped[int | None] = mapped_column(Integer, default=None)
    chapter_zh: Mapped[str | None] = mapped_column(String(64), default=None)
    chapter_en: Mapped[str | None] = mapped_column(String(64), default=None)
    # The chapter's place in the course (0 first); problems are listed by it, then by id.
    chapter_position: Mapped[int | None] = mapped_column(Integer, default=None)
    prerequisites: Mapped[list[str] | None] = mapped_column(JSON, default=None)
    tags: Mapped[list[str]] = mapped_column(JSON, default=list)
    max_score: Mapped[int]
    public_cases: Mapped[list[str]] = mapped_column(JSON, default=list)
    limits: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    statement_zh: Mapped[str] = mapped_column(Text)
    statement_en: Mapped[str] = mapped_column(Text, default="")
    starter: Mapped[str] = mapped_column(Text)
    # The package's `version` (problem.toml) and its change notes, {"3": {"zh": ..., "en": ...}}
    # (migration 0010), written when the row is made and again at every sync of the current
    # version; NULL on a row made before 0010 that no sync has seen since.
    package_version: Mapped[int | None] = mapped_column(Integer, default=None)
    changes: Mapped[dict[str, dict[str, str]] | None] = mapped_column(JSON, default=None)
    # The version that new submissions are judged against; older ones stay for the record.
    current: Mapped[bool] = mapped_column(Boolean, default=True, index=True)
    loaded_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class ValidationState(StrEnum):
    RUNNING = "running"
    SOUND = "sound"  # every check passed
    UNSOUND = "unsound"  # a check failed
    ERROR = "error"  # it could not run to the end (or the server stopped meanwhile)


class ProblemValidation(Base):
    """One `judge validate` of a package version, started by an admin from the web."""

    __tablename__ = "problem_validations"
    __table_args__ = (one_of("status", ValidationState),)

    id: Mapped[int] = mapped_column(primary_key=True)
    problem_version_id: Mapped[int] = mapped_column(
        ForeignKey("problem_versions.id", ondelete="CASCADE"), index=True
    )
    status: Mapped[str] = mapped_column(String(16), default=ValidationState.RUNNING)
    # The checks as `judge validate --json` lists them (name, ok, detail), or the error.
    checks: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)
    error: Mapped[str] = mapped_column(Text, default="")
    started_by: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"), default=None)
    started_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)
