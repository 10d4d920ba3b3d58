"""The scratch cell: the learner's code on inputs they write, in the sandbox, never scored."""

from __future__ import annotations

from functools import partial
from typing import Annotated

from fastapi import APIRouter, Query, Request
from pydantic import BaseModel, Field
from starlette.concurrency import run_in_threadpool

from judge.core.runner.scratch import MAX_SNIPPET
from web.deps import (
    BoardDep,
    DbDep,
    DbText,
    IdPath,
    NoticesDep,
    ProblemsDep,
    SettingsDep,
    UserDep,
    client_address,
    reader_language,
)
from web.judging.waiting import MAX_WAIT_S, changed_view
from web.scratch import service
from web.scratch.service import ScratchExamples, ScratchView
from web.submissions.models import SubmissionStatus
from web.submissions.router import Accepted  # the same 202 answer as a Run or Submit

router = APIRouter(prefix="/api/scratch", tags=["scratch"])


class ScratchBody(BaseModel):
    problem_id: DbText = Field(max_length=16)
    code: DbText
    snippet: DbText = Field(max_length=MAX_SNIPPET)


@router.post("", status_code=202, response_model=Accepted)
def create_scratch(
    body: ScratchBody, request: Request, user: UserDep, db: DbDep, settings: SettingsDep, notices: NoticesDep
) -> Accepted:
    """Run the code, then the snippet, in the sandbox (not scored, not listed); rate-limited with runs."""
    address = client_address(request)
    sub = service.start(db, settings, notices, user, body.problem_id, body.code, body.snippet, address)
    return Accepted(id=sub.id, status=sub.status)


@router.get("/examples/{problem_id}", response_model=ScratchExamples)
def get_examples(problem_id: DbText, problems: ProblemsDep) -> ScratchExamples:
    """The snippet the scratch cell opens with and the public cases' calls (the author's, from
    the package); public like the problem's statement, so no account is asked for."""
    return service.examples(problems, problem_id)


@router.get("/{scratch_id}", response_model=ScratchView)
async def get_scratch(
    request: Request,
    scratch_id: IdPath,
    user: UserDep,
    db: DbDep,
    board: BoardDep,
    wait: Annotated[
        float, Query(ge=0, le=MAX_WAIT_S, description="long-poll: answer when the status changes")
    ] = 0.0,
) -> ScratchView:
    lang = reader_language(request, user.language)
    first = await run_in_threadpool(service.read, db, scratch_id, user, lang)
    if wait <= 0 or first.status == SubmissionStatus.DONE:
        return first
    await run_in_threadpool(db.rollback)
    read_now = partial(service.read_now, db, scratch_id, user, lang)
    return await changed_view(board, scratch_id, first, read_now, wait)
