"""Every model, imported in one place so that the metadata is complete (Alembic, tests)."""

from web.auth.models import ApiToken, LoginAttempt, LoginSession, RateEvent, User
from web.db import Base
from web.drafts.models import Draft
from web.problems.models import ProblemValidation, ProblemVersion
from web.scores.models import Score
from web.solutions.models import ReferenceTiming
from web.submissions.models import Submission, SubmissionEvent

__all__ = [
    "ApiToken",
    "Base",
    "Draft",
    "LoginAttempt",
    "LoginSession",
    "ProblemValidation",
    "ProblemVersion",
    "RateEvent",
    "ReferenceTiming",
    "Score",
    "Submission",
    "SubmissionEvent",
    "User",
]
