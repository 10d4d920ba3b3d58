"""A class (an instructor's group of learners), who is in it, and its assignments.

Times are stored in UTC and shown in the reader's time zone. Whether a submission was in time is
decided from its `created_at` (when the learner pressed Submit), never from when it was judged:
a long queue must not make anyone late."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, Index, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from web.db import Base, UTCDateTime, utcnow


class Group(Base):
    """A class. ("Group" in code: `class` is Python's.) Learners join it with `join_code` while
    `joining_open`, or its instructor adds them by name."""

    __tablename__ = "classes"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(80))
    instructor_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    join_code: Mapped[str] = mapped_column(String(16), unique=True)
    joining_open: Mapped[bool] = mapped_column(default=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class Membership(Base):
    """A learner in a class."""

    __tablename__ = "class_members"
    __table_args__ = (Index("ix_class_members_user", "user_id"),)

    class_id: Mapped[int] = mapped_column(ForeignKey("classes.id", ondelete="CASCADE"), primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), primary_key=True)
    joined_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class Assignment(Base):
    """Problems to solve between `opens_at` and `due_at`. Work after the due time (or after the
    learner's extension) is shown as late; `late_counts` says whether the gradebook's grade
    counts it."""

    __tablename__ = "assignments"

    id: Mapped[int] = mapped_column(primary_key=True)
    class_id: Mapped[int] = mapped_column(ForeignKey("classes.id", ondelete="CASCADE"), index=True)
    title: Mapped[str] = mapped_column(String(120))
    opens_at: Mapped[datetime] = mapped_column(UTCDateTime())
    due_at: Mapped[datetime] = mapped_column(UTCDateTime())
    late_counts: Mapped[bool] = mapped_column(default=False)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class AssignmentProblem(Base):
    """One problem of an assignment, in the order the instructor listed them."""

    __tablename__ = "assignment_problems"

    assignment_id: Mapped[int] = mapped_column(
        ForeignKey("assignments.id", ondelete="CASCADE"), primary_key=True
    )
    problem_id: Mapped[str] = mapped_column(String(16), primary_key=True)
    position: Mapped[int] = mapped_column(default=0)


class Extension(Base):
    """A later due time for one learner on one assignment."""

    __tablename__ = "extensions"
    __table_args__ = (UniqueConstraint("assignment_id", "user_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    assignment_id: Mapped[int] = mapped_column(ForeignKey("assignments.id", ondelete="CASCADE"))
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    due_at: Mapped[datetime] = mapped_column(UTCDateTime())
