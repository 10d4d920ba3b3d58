"""Submitting code (run: public cases, not scored; submit: all cases, scored) and reading results."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Query, Request
from pydantic import BaseModel, Field
from sqlalchemy import select

from web.auth import ratelimit
from web.auth.models import User
from web.deps import DbDep, DbText, IdPath, PlatformDep, UserDep, client_address
from web.errors import ensure_code_fits, not_found
from web.problems.models import ProblemVersion
from web.problems.sync import current_version
from web.submissions.models import Submission, SubmissionEvent
from web.submissions.views import SubmissionDetail, SubmissionSummary, detail, summary

router = APIRouter(prefix="/api/submissions", tags=["submissions"])


class SubmitBody(BaseModel):
    problem_id: DbText = Field(max_length=16)
    code: DbText
    mode: Literal["run", "submit"] = "submit"


class Accepted(BaseModel):
    id: int
    status: str


@router.post("", status_code=202, response_model=Accepted)
def create_submission(
    body: SubmitBody, request: Request, user: UserDep, db: DbDep, platform: PlatformDep
) -> Accepted:
    ensure_code_fits(body.code, platform.settings.max_code_bytes)
    if current_version(db, body.problem_id) is None:
        raise not_found(f"problem {body.problem_id}")
    address = client_address(request)
    ratelimit.check_submit(db, platform.settings, user.id, address)
    sub = Submission(
        user_id=user.id, problem_id=body.problem_id, mode=body.mode, code=body.code, client_address=address
    )
    db.add(sub)
    db.flush()
    db.add(SubmissionEvent(submission_id=sub.id, kind="queued"))
    db.commit()
    platform.wake_workers()
    return Accepted(id=sub.id, status=sub.status)


@router.get("", response_model=list[SubmissionSummary])
def my_submissions(
    user: UserDep,
    db: DbDep,
    problem_id: Annotated[DbText | None, Query(max_length=16)] = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
) -> list[SubmissionSummary]:
    query = select(Submission).where(Submission.user_id == user.id)
    if problem_id is not None:
        query = query.where(Submission.problem_id == problem_id)
    rows = db.scalars(query.order_by(Submission.id.desc()).limit(limit)).all()
    return [summary(s) for s in rows]


@router.get("/{submission_id}", response_model=SubmissionDetail)
def get_submission(submission_id: IdPath, user: UserDep, db: DbDep) -> SubmissionDetail:
    sub = db.get(Submission, submission_id)
    # Someone else's submission is "not found", so ids reveal nothing.
    if sub is None or (sub.user_id != user.id and not user.is_admin):
        raise not_found(f"submission {submission_id}")
    owner = db.get(User, sub.user_id)
    version = db.get(ProblemVersion, sub.problem_version_id) if sub.problem_version_id else None
    return detail(
        sub, owner.username if owner else "?", version.content_hash if version else None, user.is_admin
    )
