"""Admin: users, every submission, rejudging a submission or a whole problem, reloading problems."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from pydantic import BaseModel
from sqlalchemy import select

from web.auth.models import User
from web.deps import AdminDep, DbDep, DbText, IdPath, PlatformDep
from web.errors import not_found
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


@router.post("/problems/sync", response_model=Synced)
def sync(_admin: AdminDep, platform: PlatformDep) -> Synced:
    changed = platform.reload_problems()
    return Synced(problems=len(platform.problems), new_versions=changed)
