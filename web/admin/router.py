"""Admin: users, every submission, rejudging a submission or a whole problem, reloading problems."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Query
from pydantic import BaseModel
from sqlalchemy import select

from web.auth.models import User
from web.deps import AdminDep, DbDep, DbText, IdPath, PlatformDep
from web.errors import not_found
from web.problems import validation
from web.problems.models import ProblemValidation, ProblemVersion
from web.problems.sync import current_version
from web.submissions import queue
from web.submissions.models import Submission
from web.submissions.views import SubmissionSummary, summary

router = APIRouter(prefix="/api/admin", tags=["admin"])


class AdminUser(BaseModel):
    id: int
    username: str
    role: str


class AdminSubmission(SubmissionSummary):
    username: str
    attempts: int
    worker: str | None


class Rejudged(BaseModel):
    queued: int


class ValidationOut(BaseModel):
    id: int
    status: str  # running, sound, unsound, error
    started_at: datetime
    finished_at: datetime | None
    failed: list[str]  # names of the checks that failed
    checks: list[dict[str, Any]]
    error: str


class AdminProblem(BaseModel):
    id: str
    title_zh: str
    title_en: str
    version: str
    validation: ValidationOut | None  # the newest validation of the current version


class Synced(BaseModel):
    problems: int
    new_versions: list[str]


@router.get("/users", response_model=list[AdminUser])
def users(_admin: AdminDep, db: DbDep) -> list[AdminUser]:
    return [
        AdminUser(id=u.id, username=u.username, role=u.role)
        for u in db.scalars(select(User).order_by(User.id))
    ]


@router.get("/submissions", response_model=list[AdminSubmission])
def all_submissions(
    _admin: AdminDep,
    db: DbDep,
    problem_id: Annotated[DbText | None, Query(max_length=16)] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
) -> list[AdminSubmission]:
    query = select(Submission, User.username).join(User, User.id == Submission.user_id)
    if problem_id is not None:
        query = query.where(Submission.problem_id == problem_id)
    rows = db.execute(query.order_by(Submission.id.desc()).limit(limit)).all()
    return [
        AdminSubmission(**summary(s).model_dump(), username=name, attempts=s.attempts, worker=s.worker)
        for s, name in rows
    ]


@router.post("/submissions/{submission_id}/rejudge", response_model=Rejudged)
def rejudge_submission(submission_id: IdPath, _admin: AdminDep, db: DbDep, platform: PlatformDep) -> Rejudged:
    if db.get(Submission, submission_id) is None:
        raise not_found(f"submission {submission_id}")
    n = queue.rejudge(db, [submission_id])
    db.commit()
    platform.wake_workers()
    return Rejudged(queued=n)


@router.post("/problems/{problem_id}/rejudge", response_model=Rejudged)
def rejudge_problem(problem_id: DbText, _admin: AdminDep, db: DbDep, platform: PlatformDep) -> Rejudged:
    ids = list(db.scalars(select(Submission.id).where(Submission.problem_id == problem_id)))
    n = queue.rejudge(db, ids)
    db.commit()
    platform.wake_workers()
    return Rejudged(queued=n)


def _validation_out(v: ProblemValidation) -> ValidationOut:
    return ValidationOut(
        id=v.id,
        status=v.status,
        started_at=v.started_at,
        finished_at=v.finished_at,
        failed=[c["name"] for c in v.checks if not c.get("ok")],
        checks=v.checks,
        error=v.error,
    )


@router.get("/problems", response_model=list[AdminProblem])
def problems(_admin: AdminDep, db: DbDep) -> list[AdminProblem]:
    versions = db.scalars(
        select(ProblemVersion).where(ProblemVersion.current.is_(True)).order_by(ProblemVersion.problem_id)
    ).all()
    found = validation.latest(db, [v.id for v in versions])
    return [
        AdminProblem(
            id=v.problem_id,
            title_zh=v.title_zh,
            title_en=v.title_en,
            version=v.content_hash,
            validation=_validation_out(found[v.id]) if v.id in found else None,
        )
        for v in versions
    ]


@router.post("/problems/{problem_id}/validate", status_code=202, response_model=ValidationOut)
def validate_problem(problem_id: DbText, admin: AdminDep, db: DbDep, platform: PlatformDep) -> ValidationOut:
    version = current_version(db, problem_id)
    problem = platform.problems.get(problem_id)
    if version is None or problem is None:
        raise not_found(f"problem {problem_id}")
    backend = platform.judge.backend if platform.judge is not None else None
    record = validation.start(
        platform.factory, db, version, problem.root, backend, platform.settings, admin.id
    )
    return _validation_out(record)


@router.get("/validations/{validation_id}", response_model=ValidationOut)
def get_validation(validation_id: IdPath, _admin: AdminDep, db: DbDep) -> ValidationOut:
    record = db.get(ProblemValidation, validation_id)
    if record is None:
        raise not_found(f"validation {validation_id}")
    return _validation_out(record)


@router.post("/problems/sync", response_model=Synced)
def sync(_admin: AdminDep, platform: PlatformDep) -> Synced:
    changed = platform.reload_problems()
    return Synced(problems=len(platform.problems), new_versions=changed)
