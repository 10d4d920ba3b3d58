"""Every model, imported in one place so that the metadata is complete (Alembic, tests)."""

from web.auth.models import ApiToken, LoginAttempt, LoginSession, User
from web.db import Base
from web.problems.models import ProblemVersion
from web.scores.models import Score
from web.submissions.models import Submission, SubmissionEvent

__all__ = [
    "ApiToken",
    "Base",
    "LoginAttempt",
    "LoginSession",
    "ProblemVersion",
    "Score",
    "Submission",
    "SubmissionEvent",
    "User",
]
