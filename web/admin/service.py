"""What admins see and do: users, every submission, rejudging, problem sync and validation.
The API's admin routes and the admin page both call these; who may is `web.deps.require_admin`."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from judge.authoring.package import Problem
from judge.authoring.validation.files import BARS
from web.auth.models import User
from web.auth.service import end_sessions_and_tokens
from web.errors import N_, ApiError, not_found
from web.judging import queue
from web.judging.judges import JudgeContext
from web.notify import Notices
from web.problems import validation
from web.problems.models import ProblemValidation
from web.problems.service import current_versions
from web.problems.sync import current_version
from web.settings import WebSettings
from web.submissions.models import Mode, Submission
from web.submissions.views import SubmissionSummary, summary


class AdminUser(BaseModel):
    id: int
    username: str
    role: str
    disabled: bool
    email: str | None = None  # admins and the account itself only


def admin_user(u: User) -> AdminUser:
    return AdminUser(id=u.id, username=u.username, role=u.role, disabled=u.disabled, email=u.email)


class AdminSubmission(SubmissionSummary):
    username: str
    attempts: int
    worker: str | None


class ValidationOut(BaseModel):
    id: int
    status: str  # a ValidationState: running, sound, unsound, error
    started_at: datetime
    finished_at: datetime | None
    failed: list[str]  # names of the checks that failed
    checks: list[dict[str, Any]]
    error: str


class LoweredBar(BaseModel):
    """A coverage bar the package lowers in its `[validation]`, and why."""

    key: str  # its name in `[validation]`: min_public, min_hidden, min_accepted, min_wrong
    value: int
    default: int
    reason: str


class AdminProblem(BaseModel):
    id: str
    title_zh: str
    title_en: str
    version: str
    validation: ValidationOut | None  # the newest validation of the current version
    lowered: list[LoweredBar] = []


def lowered_bars(problem: Problem | None) -> list[LoweredBar]:
    """What the package's `[validation]` lowers (an admin should see it beside "Sound")."""
    if problem is None:
        return []
    mine = problem.spec.validation.lowered()
    return [
        LoweredBar(key=bar.key, value=mine[bar.key].value, default=bar.default, reason=mine[bar.key].reason)
        for bar in BARS
        if bar.key in mine
    ]


def users(db: Session) -> list[AdminUser]:
    return [admin_user(u) for u in db.scalars(select(User).order_by(User.id))]


def set_disabled(db: Session, admin: User, user_id: int, disabled: bool) -> AdminUser:
    """Disable or enable an account. Disabling ends its sessions and revokes its tokens at once,
    so enabling gives back the log-in only. No admin may disable themself: the site would be
    left with no way back for them."""
    user = db.get(User, user_id)
    if user is None:
        raise ApiError(404, "not_found", N_("No such user."))
    if disabled and user.id == admin.id:
        raise ApiError(409, "cannot_disable_self", N_("You cannot disable your own account."))
    user.disabled = disabled
    if disabled:
        end_sessions_and_tokens(db, user.id)
    db.commit()
    return admin_user(user)


def submission_counts(db: Session) -> dict[int, int]:
    """How many submissions each user has made, by user id."""
    counted = select(Submission.user_id, func.count()).where(Submission.mode != Mode.SCRATCH)
    rows = db.execute(counted.group_by(Submission.user_id))
    return {user_id: n for user_id, n in rows}


def all_submissions(db: Session, problem_id: str | None, limit: int) -> list[AdminSubmission]:
    query = (
        select(Submission, User.username)
        .join(User, User.id == Submission.user_id)
        .where(Submission.mode != Mode.SCRATCH)  # scratch runs are the learner's own notes
    )
    if problem_id is not None:
        query = query.where(Submission.problem_id == problem_id)
    rows = db.execute(query.order_by(Submission.id.desc()).limit(limit)).all()
    return [
        AdminSubmission(**summary(s).model_dump(), username=name, attempts=s.attempts, worker=s.worker)
        for s, name in rows
    ]


def rejudge_submission(db: Session, notices: Notices, submission_id: int) -> int:
    """Put one judged submission back in the queue; how many went (0 while it is still queued)."""
    if db.get(Submission, submission_id) is None:
        raise not_found("submission", submission_id)
    n = queue.rejudge(db, [submission_id], notices)
    db.commit()
    return n


def rejudge_problem(db: Session, notices: Notices, problem_id: str) -> int:
    """Put every judged submission to a problem back in the queue."""
    judged = select(Submission.id).where(Submission.problem_id == problem_id, Submission.mode != Mode.SCRATCH)
    ids = list(db.scalars(judged))
    n = queue.rejudge(db, ids, notices)
    db.commit()
    return n


def validation_out(v: ProblemValidation) -> ValidationOut:
    return ValidationOut(
        id=v.id,
        status=v.status,
        started_at=v.started_at,
        finished_at=v.finished_at,
        failed=[c["name"] for c in v.checks if not c.get("ok")],
        checks=v.checks,
        error=v.error,
    )


def problems(db: Session, offered: dict[str, Problem]) -> list[AdminProblem]:
    """Every offered problem with the newest validation of its current version, and the bars
    its package lowers."""
    versions = current_versions(db)
    found = validation.latest(db, [v.id for v in versions])
    return [
        AdminProblem(
            id=v.problem_id,
            title_zh=v.title_zh,
            title_en=v.title_en,
            version=v.content_hash,
            validation=validation_out(found[v.id]) if v.id in found else None,
            lowered=lowered_bars(offered.get(v.problem_id)),
        )
        for v in versions
    ]


def validate_problem(
    db: Session,
    factory: sessionmaker[Session],
    problems: dict[str, Problem],
    judge: JudgeContext | None,
    settings: WebSettings,
    problem_id: str,
    admin: User,
) -> ValidationOut:
    """Start `judge validate` of the problem's current version in the background (its sessions
    come from `factory`), on this process's judge."""
    version = current_version(db, problem_id)
    problem = problems.get(problem_id)
    if version is None or problem is None:
        raise not_found("problem", problem_id)
    backend = judge.backend if judge is not None else None
    record = validation.start(factory, db, version, problem.root, backend, settings, admin.id)
    return validation_out(record)


def get_validation(db: Session, validation_id: int) -> ValidationOut:
    record = db.get(ProblemValidation, validation_id)
    if record is None:
        raise not_found("validation", validation_id)
    return validation_out(record)
