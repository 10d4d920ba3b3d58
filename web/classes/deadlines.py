"""When work is due for one learner, and whether a moment was in time.

A submission is in time when it was *made* (`created_at`, the moment Submit was pressed) at or
before the learner's due time: the queue's length never makes anyone late.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from web.classes.models import Assignment


def due_for(assignment: Assignment, extensions: Mapping[int, datetime], user_id: int) -> datetime:
    """The learner's due time: their extension if they have one, else the assignment's. An
    extension only ever moves the time later (the service refuses an earlier one)."""
    return extensions.get(user_id, assignment.due_at)


def in_time(made_at: datetime, due_at: datetime) -> bool:
    return made_at <= due_at


def is_open(assignment: Assignment, now: datetime) -> bool:
    """Learners see an assignment from its opening time on."""
    return now >= assignment.opens_at
