"""The reference's own time on each case, measured once per package version and runtime."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, ForeignKey, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from web.db import Base, UTCDateTime, utcnow


class ReferenceTiming(Base):
    """How long reference.py took on each case of one package version, judged as a learner's
    Submit is, in the sandbox that judges learners (web.solutions.service.measure_reference).

    Kept so that the comparison a learner sees after AC stays the same numbers for the life
    of a version, whichever process shows it and however often the judge's cache is cleared."""

    __tablename__ = "reference_timings"
    __table_args__ = (
        UniqueConstraint("problem_version_id", "runtime", name="uq_reference_timings_version_runtime"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    problem_version_id: Mapped[int] = mapped_column(ForeignKey("problem_versions.id", ondelete="CASCADE"))
    # The judging runtime (a hash of the backend's runtime id: interpreter, torch, image):
    # another image or torch is another measurement.
    runtime: Mapped[str] = mapped_column(String(64))
    backend: Mapped[str] = mapped_column(String(32))
    # Case name -> milliseconds, as the runner timed the call (no sandbox start-up).
    cases: Mapped[dict[str, float]] = mapped_column(JSON, default=dict)
    measured_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
