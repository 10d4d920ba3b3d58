"""Every model, imported in one place so that the metadata is complete (Alembic, tests)."""

from web.admin.models import SiteOption
from web.auth.models import ApiToken, InviteCode, LoginAttempt, LoginSession, PasswordReset, RateEvent, User
from web.classes.models import Assignment, AssignmentProblem, Extension, Group, Membership
from web.db import Base
from web.drafts.models import Draft
from web.problems.models import ProblemValidation, ProblemVersion
from web.scores.models import Score
from web.solutions.models import ReferenceTiming
from web.submissions.models import Submission, SubmissionEvent

__all__ = [
    "ApiToken",
    "Assignment",
    "AssignmentProblem",
    "Base",
    "Draft",
    "Extension",
    "Group",
    "InviteCode",
    "LoginAttempt",
    "LoginSession",
    "Membership",
    "PasswordReset",
    "ProblemValidation",
    "ProblemVersion",
    "RateEvent",
    "ReferenceTiming",
    "Score",
    "SiteOption",
    "Submission",
    "SubmissionEvent",
    "User",
]
