"""Submitting code (run: public cases, not scored; submit: all cases, scored) and reading results."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Query, Request
from pydantic import BaseModel, Field
from sqlalchemy import bindparam, select
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool

from web.auth import ratelimit
from web.auth.models import User
from web.deps import DbDep, DbText, IdPath, PlatformDep, UserDep, client_address, reader_language
from web.errors import ensure_code_fits, not_found
from web.problems.models import ProblemVersion
from web.problems.sync import current_version
from web.submissions.models import Submission, SubmissionEvent
from web.submissions.views import SubmissionDetail, SubmissionSummary, detail, summary
from web.submissions.waiting import MAX_WAIT_S, CompletionBoard

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
async def get_submission(
    request: Request,
    submission_id: IdPath,
    user: UserDep,
    db: DbDep,
    platform: PlatformDep,
    wait: Annotated[
        float,
        Query(
            ge=0,
            le=MAX_WAIT_S,
            description="长轮询 long-poll: answer when the status changes (or after this many seconds)",
        ),
    ] = 0.0,
) -> SubmissionDetail:
    # Every waiting learner's page reads this. The reads run in a thread; the answer is checked
    # against the response model here on the loop (a plain-function route would send that
    # check to a second thread).
    lang = reader_language(request, user.language)
    first = await run_in_threadpool(read_submission, submission_id, user, db, lang)
    if wait <= 0 or first.status == "done":
        return first
    # The wait itself holds no thread and no database connection: it sleeps on the loop until
    # a worker of this process announces a change, re-reading the status every RECHECK_S for
    # workers elsewhere.
    await run_in_threadpool(db.rollback)

    async def changed() -> bool:
        status = await run_in_threadpool(_status_now, db, submission_id)
        return status != first.status

    board = platform.pool.board if platform.pool is not None else _UNANNOUNCED
    if not await board.wait_until(submission_id, changed, wait):
        return first
    return await run_in_threadpool(read_submission, submission_id, user, db, lang)


# Nobody announces on it: for a server whose workers all run elsewhere (JUDGE_WORKERS=0).
_UNANNOUNCED = CompletionBoard()


def _status_now(db: Session, submission_id: int) -> str | None:
    try:
        return db.scalar(select(Submission.status).where(Submission.id == submission_id))
    finally:
        db.rollback()  # give the connection back between reads


# A submission with the content hash of the version it was judged against, in one query.
_SUBMISSION_AND_VERSION = (
    select(Submission, ProblemVersion.content_hash)
    .outerjoin(ProblemVersion, ProblemVersion.id == Submission.problem_version_id)
    .where(Submission.id == bindparam("id"))
)


def read_submission(submission_id: int, user: User, db: Session, lang: str = "zh") -> SubmissionDetail:
    found = db.execute(_SUBMISSION_AND_VERSION, {"id": submission_id}).first()
    # Someone else's submission is "not found", so ids reveal nothing.
    if found is None or (found[0].user_id != user.id and not user.is_admin):
        raise not_found(f"submission {submission_id}")
    sub: Submission = found[0]
    version: str | None = found[1]
    owner = db.get(User, sub.user_id)  # the reader themself: no query (the identity map has them)
    return detail(sub, owner.username if owner else "?", version, user.is_admin, lang)
