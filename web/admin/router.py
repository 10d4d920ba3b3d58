"""Admin: users, every submission, rejudging a submission or a whole problem, reloading problems."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from pydantic import BaseModel

from web.admin import service
from web.admin.service import AdminProblem, AdminSubmission, AdminUser, ValidationOut
from web.deps import (
    AdminDep,
    DbDep,
    DbText,
    FactoryDep,
    IdPath,
    JudgeDep,
    NoticesDep,
    PlatformDep,
    ProblemsDep,
    SettingsDep,
)

router = APIRouter(prefix="/api/admin", tags=["admin"])


class Rejudged(BaseModel):
    queued: int


class Synced(BaseModel):
    problems: int
    new_versions: list[str]


@router.get("/users", response_model=list[AdminUser])
def users(_admin: AdminDep, db: DbDep) -> list[AdminUser]:
    return service.users(db)


@router.post("/users/{user_id}/disable", response_model=AdminUser)
def disable_user(user_id: IdPath, admin: AdminDep, db: DbDep) -> AdminUser:
    """The account's sessions end and its tokens are revoked; its log-ins are refused."""
    return service.set_disabled(db, admin, user_id, True)


@router.post("/users/{user_id}/enable", response_model=AdminUser)
def enable_user(user_id: IdPath, admin: AdminDep, db: DbDep) -> AdminUser:
    return service.set_disabled(db, admin, user_id, False)


@router.get("/submissions", response_model=list[AdminSubmission])
def all_submissions(
    _admin: AdminDep,
    db: DbDep,
    problem_id: Annotated[DbText | None, Query(max_length=16)] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
) -> list[AdminSubmission]:
    return service.all_submissions(db, problem_id, limit)


@router.post("/submissions/{submission_id}/rejudge", response_model=Rejudged)
def rejudge_submission(submission_id: IdPath, _admin: AdminDep, db: DbDep, notices: NoticesDep) -> Rejudged:
    return Rejudged(queued=service.rejudge_submission(db, notices, submission_id))


@router.post("/problems/{problem_id}/rejudge", response_model=Rejudged)
def rejudge_problem(problem_id: DbText, _admin: AdminDep, db: DbDep, notices: NoticesDep) -> Rejudged:
    return Rejudged(queued=service.rejudge_problem(db, notices, problem_id))


@router.get("/problems", response_model=list[AdminProblem])
def problems(_admin: AdminDep, db: DbDep, offered: ProblemsDep) -> list[AdminProblem]:
    return service.problems(db, offered)


@router.post("/problems/{problem_id}/validate", status_code=202, response_model=ValidationOut)
def validate_problem(
    problem_id: DbText,
    admin: AdminDep,
    db: DbDep,
    factory: FactoryDep,
    problems: ProblemsDep,
    judge: JudgeDep,
    settings: SettingsDep,
) -> ValidationOut:
    return service.validate_problem(db, factory, problems, judge, settings, problem_id, admin)


@router.get("/validations/{validation_id}", response_model=ValidationOut)
def get_validation(validation_id: IdPath, _admin: AdminDep, db: DbDep) -> ValidationOut:
    return service.get_validation(db, validation_id)


@router.post("/problems/sync", response_model=Synced)
def sync(_admin: AdminDep, platform: PlatformDep) -> Synced:
    changed = platform.reload_problems()
    return Synced(problems=len(platform.problems), new_versions=changed)
