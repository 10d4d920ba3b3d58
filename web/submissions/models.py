"""Submissions, which are also the queue, and the events that record each step of a job."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import JSON, ForeignKey, Index, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from web.db import Base, UTCDateTime, one_of, utcnow


class SubmissionStatus(StrEnum):
    """Where a submission is in the queue."""

    QUEUED = "queued"
    RUNNING = "running"  # claimed by a worker, under a lease
    DONE = "done"  # judged (or given up on, as SE)


class Mode(StrEnum):
    RUN = "run"  # the public cases, not scored
    SUBMIT = "submit"  # every case, scored
    # The scratch cell (web.scratch): the learner's snippet after their code, never scored,
    # listed or counted; only its own routes show it.
    SCRATCH = "scratch"


class EventKind(StrEnum):
    """What `submission_events` records of each step of a job."""

    QUEUED = "queued"
    CLAIMED = "claimed"
    DONE = "done"
    REQUEUED = "requeued"  # the lease was lost or the worker failed; it goes round again
    FAILED = "failed"  # given up after the last attempt: SE
    REJUDGE = "rejudge"  # an admin put it back in the queue


class Submission(Base):
    __tablename__ = "submissions"
    __table_args__ = (
        # The claim query's candidates: the queued rows, and running ones whose lease ran out.
        Index("ix_submissions_status_id", "status", "id"),
        Index("ix_submissions_user_problem", "user_id", "problem_id"),
        Index("ix_submissions_user_created", "user_id", "created_at"),
        Index("ix_submissions_address_created", "client_address", "created_at"),
        # The fair claim: when an account was last served (web.judging.queue).
        Index("ix_submissions_user_started", "user_id", "started_at"),
        # The per-account cap: an account's jobs that wait or are being judged.
        Index("ix_submissions_user_status", "user_id", "status"),
        # The fair claim: when a rejudge (its submissions share rejudged_at) was last served.
        Index("ix_submissions_rejudged_started", "rejudged_at", "started_at"),
        one_of("status", SubmissionStatus),
        one_of("mode", Mode),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    problem_id: Mapped[str] = mapped_column(String(16))
    mode: Mapped[str] = mapped_column(String(8))
    code: Mapped[str] = mapped_column(Text)
    client_address: Mapped[str] = mapped_column(String(64), default="")
    status: Mapped[str] = mapped_column(String(8), default=SubmissionStatus.QUEUED)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    # The exact package version the verdict was computed against (set when judged).
    problem_version_id: Mapped[int | None] = mapped_column(ForeignKey("problem_versions.id"), default=None)
    # Queue bookkeeping: claims so far, and the lease of the current claim.
    attempts: Mapped[int] = mapped_column(default=0)
    lease_token: Mapped[str | None] = mapped_column(String(64), default=None)
    lease_expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)
    worker: Mapped[str | None] = mapped_column(String(128), default=None)
    started_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)
    # When an admin last put it back in the queue (None: never): the claim puts a rejudge
    # behind the learners' own jobs and ages it from then (web.judging.queue).
    rejudged_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)
    # The result.
    verdict: Mapped[str | None] = mapped_column(String(4), default=None)
    score: Mapped[int | None] = mapped_column(default=None)
    max_score: Mapped[int | None] = mapped_column(default=None)
    report: Mapped[dict[str, Any] | None] = mapped_column(JSON, default=None)
    # What an admin's rejudge did not take away (migration 0010): the best result the submission
    # had before a rejudge judged it lower, and the package version it was judged on. NULL when
    # no rejudge lowered it. The learner's best score counts it (web.scores.service); the new
    # result is the one above, and both are shown.
    kept_verdict: Mapped[str | None] = mapped_column(String(4), default=None)
    kept_score: Mapped[int | None] = mapped_column(default=None)
    kept_max_score: Mapped[int | None] = mapped_column(default=None)
    kept_version: Mapped[int | None] = mapped_column(default=None)
    # How far the worker judging it has come (migration 0011): {"done", "total", "stage"}, with
    # stage "public" (the public cases' job runs) or "hidden" (it is done: the hidden cases run).
    # None while queued and once judged.
    progress: Mapped[dict[str, Any] | None] = mapped_column(JSON, default=None)
    # The problem whose part the code lacked, when that stopped it before any case ran (migration
    # 0013): no attempt, no score (web.problems.service, web.scores.service).
    blocked_by: Mapped[str | None] = mapped_column(String(16), default=None)
    # A scratch run's snippet (None for runs and submits).
    snippet: Mapped[str | None] = mapped_column(Text, default=None)


class SubmissionEvent(Base):
    """queued, claimed, done, requeued (lease lost or worker error), failed (gave up), rejudge."""

    __tablename__ = "submission_events"
    __table_args__ = (one_of("kind", EventKind),)

    id: Mapped[int] = mapped_column(primary_key=True)
    submission_id: Mapped[int] = mapped_column(ForeignKey("submissions.id", ondelete="CASCADE"), index=True)
    kind: Mapped[str] = mapped_column(String(16))
    worker: Mapped[str | None] = mapped_column(String(128), default=None)
    detail: Mapped[str] = mapped_column(Text, default="")
    at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
