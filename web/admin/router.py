"""Admin: users, every submission, rejudging a submission or a whole problem, reloading problems."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from pydantic import BaseModel, Field

from web.admin import service
from web.admin.service import AdminProblem, AdminSubmission, AdminUser, ValidationOut
from web.auth import invites
from web.auth.invites import InviteOut, InviteRequest, NewInvite
from web.auth.registration import RegistrationMode, registration_mode, set_registration_mode
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
    SecretKeyDep,
    SettingsDep,
)

router = APIRouter(prefix="/api/admin", tags=["admin"])


class Rejudged(BaseModel):
    queued: int


class Synced(BaseModel):
    problems: int
    new_versions: list[str]


class Registration(BaseModel):
    mode: RegistrationMode = Field(
        description="open: anyone registers; invite: with an invite code; closed: nobody (the setting "
        "`registration` is the default until an admin sets one here)"
    )


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


@router.get("/registration", response_model=Registration)
def get_registration(_admin: AdminDep, db: DbDep, settings: SettingsDep) -> Registration:
    return Registration(mode=registration_mode(db, settings))


@router.put("/registration", response_model=Registration)
def put_registration(body: Registration, admin: AdminDep, db: DbDep) -> Registration:
    """Kept in the database: every web process and restart reads it (web.auth.registration)."""
    return Registration(mode=set_registration_mode(db, admin, body.mode))


@router.get("/invites", response_model=list[InviteOut])
def list_invites(_admin: AdminDep, db: DbDep) -> list[InviteOut]:
    return invites.listed(db)


@router.post("/invites", status_code=201, response_model=NewInvite)
def create_invite(body: InviteRequest, admin: AdminDep, db: DbDep, secret_key: SecretKeyDep) -> NewInvite:
    """The code is in this answer only; the list shows its first characters."""
    return invites.create(db, secret_key, admin, body)


@router.post("/invites/{invite_id}/revoke", response_model=InviteOut)
def revoke_invite(invite_id: IdPath, _admin: AdminDep, db: DbDep) -> InviteOut:
    return invites.revoke(db, invite_id)
