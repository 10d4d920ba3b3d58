"""Submitting code (run: public cases, not scored; submit: all cases, scored) and reading results."""

from __future__ import annotations

from functools import partial
from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request
from pydantic import BaseModel, Field
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool

from web.auth.models import User
from web.db import statements_on_their_own
from web.deps import (
    BoardDep,
    DbDep,
    DbText,
    IdPath,
    NoticesDep,
    PlatformDep,
    SettingsDep,
    UserDep,
    client_address,
    credentials_sent,
    read_user,
    reader_language,
)
from web.errors import N_, ApiError
from web.judging.waiting import MAX_WAIT_S, changed_view
from web.platform import Platform
from web.submissions import service
from web.submissions.models import Mode, SubmissionStatus
from web.submissions.views import SubmissionDetail, SubmissionSummary

router = APIRouter(prefix="/api/submissions", tags=["submissions"])


class SubmitBody(BaseModel):
    problem_id: DbText = Field(max_length=16)
    code: DbText
    mode: Mode = Field(Mode.SUBMIT, description="run or submit; a scratch run goes to POST /api/scratch")


class Accepted(BaseModel):
    id: int
    status: str


@router.post("", status_code=202, response_model=Accepted)
def create_submission(
    body: SubmitBody, request: Request, user: UserDep, db: DbDep, settings: SettingsDep, notices: NoticesDep
) -> Accepted:
    if body.mode == Mode.SCRATCH:
        # A scratch run needs its snippet and its own checks (POST /api/scratch): one door only.
        raise ApiError(
            422,
            "scratch_not_here",
            N_("Here mode is run or submit. A scratch run goes to POST /api/scratch, with its snippet."),
        )
    address = client_address(request)
    sub = service.submit(db, settings, notices, user, body.problem_id, body.code, body.mode, address)
    return Accepted(id=sub.id, status=sub.status)


@router.get("", response_model=list[SubmissionSummary])
def my_submissions(
    user: UserDep,
    db: DbDep,
    problem_id: Annotated[DbText | None, Query(max_length=16)] = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
) -> list[SubmissionSummary]:
    return service.my_submissions(db, user, problem_id, limit)


@router.get("/{submission_id}", response_model=SubmissionDetail, dependencies=[Depends(credentials_sent)])
async def get_submission(
    request: Request,
    submission_id: IdPath,
    platform: PlatformDep,
    db: DbDep,
    board: BoardDep,
    wait: Annotated[
        float,
        Query(
            ge=0,
            le=MAX_WAIT_S,
            description="long-poll: answer when the status changes (or after this many seconds)",
        ),
    ] = 0.0,
) -> SubmissionDetail:
    # Every waiting learner's page reads this. Who asks and the reads run in one trip to a
    # thread (UserDep would take a trip and a transaction of its own); the answer is checked
    # against the response model here on the loop (a plain-function route would send that
    # check to a second thread).
    user, first = await run_in_threadpool(_read_and_end, request, platform, db, submission_id)
    lang = reader_language(request, user.language)
    if wait <= 0 or first.status == SubmissionStatus.DONE:
        return first
    # The wait itself holds no thread and no database connection: it sleeps on the loop until
    # a SUBMISSION notice for it (from a worker of any process, web.notify) wakes it, or until
    # the board's re-read interval for workers whose notices do not reach here. Each read is the
    # whole answer, so the one that sees the change is the one sent back.
    read_now = partial(service.read_submission_now, db, submission_id, user, lang)
    return await changed_view(board, submission_id, first, read_now, wait, _waiting_state)


def _read_and_end(
    request: Request, platform: Platform, db: Session, submission_id: int
) -> tuple[User, SubmissionDetail]:
    """The reader and the submission as they may see it, in one transaction ended in this
    thread: the session then closes on the loop."""
    statements_on_their_own(db)  # reads (and a token's last use): no BEGIN and COMMIT around them
    user = read_user(request, platform, db)
    shown = service.read_submission(db, submission_id, user, reader_language(request, user.language))
    db.commit()  # nothing was written (but a token's last use); the rows stay loaded
    return user, shown


def _waiting_state(view: SubmissionDetail) -> object:
    """What a waiting reader is told changed: the status, the progress, the place in the queue."""
    return (view.status, view.progress, view.ahead)
