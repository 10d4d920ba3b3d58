"""Scratch runs as operations: queue one (a submission of mode scratch: it goes through the
queue like a Run, so a web process without a sandbox hands it to `judge worker`), and read one
as its owner may see it, in one language."""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import Any

from pydantic import BaseModel, Field
from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from judge.authoring.package import Problem
from judge.core.grading import runner_message
from judge.core.runner.scratch import MAX_SNIPPET
from web.auth import ratelimit
from web.auth.models import User
from web.db import utcnow
from web.errors import ensure_code_fits, not_found
from web.judging.notices import announce_queued
from web.judging.records import StoredScratch, StoredText, UnreadableRecord, read_scratch
from web.notify import Notices
from web.problems.sync import current_version
from web.settings import WebSettings
from web.submissions.models import EventKind, Mode, Submission, SubmissionEvent, SubmissionStatus
from web.submissions.service import ensure_job_room

log = logging.getLogger(__name__)

KEPT = 5  # a learner's newest scratch runs that are kept


class ScratchCall(BaseModel):
    """One call the snippet made to an entry point, beside the reference's answer to it."""

    call: str
    learner: str
    reference: str | None = None
    match: bool | None = None
    difference: float | None = None
    detail: str | None = None  # the comparison in words
    reason: str | None = None  # why the reference was not asked (not like a public case)


class ScratchResult(BaseModel):
    status: str  # ok, error, memory, forbidden, ce (the snippet), load (the solution), stopped
    verdict: str
    message: str = ""
    line: int | None = None
    log: str = ""
    value: dict[str, Any] | None = None
    calls: list[ScratchCall] = []
    note: str | None = None
    time_ms: float = 0.0
    elapsed_ms: float = 0.0


class CaseSnippet(BaseModel):
    """A public case's call, as the author wrote it for "use public case" (problem.toml's
    `[scratch.cases]`); `number` is its place among the public cases, from 1."""

    case: str
    number: int
    snippet: str


class ScratchExamples(BaseModel):
    """What the scratch cell opens with: the package's example (null: the package has none, and
    the cell writes a generic one) and the public cases' calls that "use public case" fills in."""

    problem_id: str
    example: str | None = None
    cases: list[CaseSnippet] = []


def examples(problems: dict[str, Problem], problem_id: str) -> ScratchExamples:
    """The author's snippets of an offered problem. Only public cases' calls, whatever
    problem.toml says (`judge validate` refuses a hidden one, and this holds without it): a
    hidden case's inputs never reach a learner."""
    problem = problems.get(problem_id)
    if problem is None:
        raise not_found("problem", problem_id)
    spec = problem.spec.scratch
    if spec is None:
        return ScratchExamples(problem_id=problem_id)
    public = [c.name for c in problem.select_cases("public")]
    cases = [
        CaseSnippet(case=name, number=i, snippet=spec.cases[name])
        for i, name in enumerate(public, start=1)
        if name in spec.cases
    ]
    return ScratchExamples(problem_id=problem_id, example=spec.example, cases=cases)


class ScratchView(BaseModel):
    id: int
    problem_id: str
    status: str  # queued, running, done
    result: ScratchResult | None = None
    unreadable: bool = Field(False, description="the stored result cannot be read (a bug): run it again")


def start(
    db: Session,
    settings: WebSettings,
    notices: Notices,
    user: User,
    problem_id: str,
    code: str,
    snippet: str,
    address: str,
) -> Submission:
    """Queue a scratch run; rate-limited with the user's runs and submits."""
    ensure_code_fits(code, settings.max_code_bytes)
    ensure_code_fits(snippet, MAX_SNIPPET)
    if current_version(db, problem_id) is None:
        raise not_found("problem", problem_id)
    ratelimit.check_submit(db, settings, user.id, address)
    sub = Submission(
        user_id=user.id,
        problem_id=problem_id,
        mode=Mode.SCRATCH,
        code=code,
        snippet=snippet,
        client_address=address,
    )
    db.add(sub)
    db.flush()
    ensure_job_room(db, settings, user.id)
    db.add(SubmissionEvent(submission_id=sub.id, kind=EventKind.QUEUED))
    announce_queued(notices, db, [sub.id])
    # Kept while the rate limit or the reveal budget (web.scratch.budget) still counts them.
    counted_s = max(settings.submit_window_s, settings.scratch_replay_window_s)
    _forget_old(db, user.id, utcnow() - timedelta(seconds=counted_s))
    db.commit()
    return sub


def _forget_old(db: Session, user_id: int, counted_since: datetime) -> None:
    """Scratch runs are notes, not records: a learner's judged ones beyond the newest `KEPT`
    go (their events with them, ON DELETE CASCADE), so the table does not grow with every try;
    never one the rate limit or the reveal budget still counts (made since `counted_since`)."""
    newest = (
        select(Submission.id)
        .where(Submission.user_id == user_id, Submission.mode == Mode.SCRATCH)
        .order_by(Submission.id.desc())
        .limit(KEPT)
    )
    db.execute(
        delete(Submission)
        .where(
            Submission.user_id == user_id,
            Submission.mode == Mode.SCRATCH,
            Submission.status == SubmissionStatus.DONE,
            Submission.created_at < counted_since,
            Submission.id.not_in(newest.scalar_subquery()),
        )
        .execution_options(synchronize_session=False)
    )


def _words(text: StoredText | None, lang: str) -> str | None:
    return text.get(lang) if text is not None else None


def localized(stored: StoredScratch, lang: str) -> ScratchResult:
    """The stored result (texts in both languages) in the reader's."""
    calls = [
        ScratchCall(
            call=c.call,
            learner=c.learner,
            reference=c.reference,
            match=c.match,
            difference=c.difference,
            detail=_words(c.detail, lang),
            reason=_words(c.reason, lang),
        )
        for c in stored.calls
    ]
    return ScratchResult(
        status=stored.status,
        verdict=stored.verdict.value,
        # A traceback is Python's words and the learner's code, the same in both languages; the
        # line the runner puts above it ("your code only") is ours, in the reader's language.
        message=_words(stored.text, lang) or runner_message(stored.message).get(lang),
        line=stored.line,
        log=stored.log,
        value=stored.value,
        calls=calls,
        note=_words(stored.note, lang),
        time_ms=stored.time_ms,
        elapsed_ms=stored.elapsed_ms,
    )


def read(db: Session, scratch_id: int, user: User, lang: str) -> ScratchView:
    """The owner's scratch run (admins' too); anything else, or a submission, is 404."""
    sub = db.get(Submission, scratch_id)
    if sub is None or sub.mode != Mode.SCRATCH or (sub.user_id != user.id and not user.is_admin):
        raise not_found("submission", scratch_id)
    view = ScratchView(id=sub.id, problem_id=sub.problem_id, status=sub.status)
    if sub.report is None:
        return view
    try:
        return view.model_copy(update={"result": localized(read_scratch(sub.report), lang)})
    except UnreadableRecord as exc:
        log.error("scratch run %s: %s", sub.id, exc)
        return view.model_copy(update={"unreadable": True})


def read_now(db: Session, scratch_id: int, user: User, lang: str) -> ScratchView:
    try:
        db.expire_all()
        return read(db, scratch_id, user, lang)
    finally:
        db.rollback()
