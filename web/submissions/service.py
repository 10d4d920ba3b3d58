"""Submissions as operations, shared by the JSON API and the pages: queue one, list one's own,
read one as its reader may see it."""

from __future__ import annotations

from sqlalchemy import bindparam, select
from sqlalchemy.orm import Session

from web.auth import ratelimit
from web.auth.models import User
from web.classes.access import teaches
from web.errors import N_, ApiError, ensure_code_fits, not_found
from web.judging.notices import announce_queued
from web.judging.queue import queued_ahead, unfinished_jobs
from web.notify import Notices
from web.problems.models import ProblemVersion
from web.problems.sync import current_version
from web.settings import WebSettings
from web.submissions.models import EventKind, Mode, Submission, SubmissionEvent, SubmissionStatus
from web.submissions.views import SubmissionDetail, SubmissionSummary, detail, summary

# The Retry-After of a refusal for too many unfinished jobs: a hint only (the cap frees as soon
# as one of them is judged, which is seconds for most), so that a client waits a little rather
# than the minute it would guess without one.
JOB_CAP_RETRY_S = 5


def submit(
    db: Session,
    settings: WebSettings,
    notices: Notices,
    user: User,
    problem_id: str,
    code: str,
    mode: Mode,
    address: str,
) -> Submission:
    """Queue `code` for judging (a run or a submit); idle workers (of every host, on PostgreSQL)
    are woken when it commits."""
    ensure_code_fits(code, settings.max_code_bytes)
    if current_version(db, problem_id) is None:
        raise not_found("problem", problem_id)
    ratelimit.check_submit(db, settings, user.id, address)
    sub = Submission(user_id=user.id, problem_id=problem_id, mode=mode, code=code, client_address=address)
    db.add(sub)
    db.flush()
    ensure_job_room(db, settings, user.id)
    db.add(SubmissionEvent(submission_id=sub.id, kind=EventKind.QUEUED))
    announce_queued(notices, db, [sub.id])
    db.commit()
    return sub


def ensure_job_room(db: Session, settings: WebSettings, user_id: int) -> None:
    """Refuse (429 too_many_jobs, as the rate limits refuse) a job that the account has just
    added (flushed, not committed) when it makes more than `jobs_per_user` of its own jobs
    waiting or being judged; judged ones and rejudges do not count.

    Counted after the new row is written, so that two requests at once cannot both take the
    last place: on SQLite the insert has taken the one write lock, so the count sees every
    committed job and no other can commit before this one; on PostgreSQL the account's row is
    locked first, so the second request counts after the first has committed. The lock is FOR
    NO KEY UPDATE: the new row's foreign key already holds FOR KEY SHARE on the account, which
    FOR UPDATE would wait on, so two requests at once would deadlock.
    """
    db.execute(select(User.id).where(User.id == user_id).with_for_update(key_share=True))
    jobs = unfinished_jobs(db, user_id)
    if jobs > settings.jobs_per_user:
        db.rollback()  # the new job goes: nothing of it is kept
        raise ApiError(
            429,
            "too_many_jobs",
            N_("You already have {jobs} jobs waiting or being judged. Try again when one is done."),
            headers={"Retry-After": str(JOB_CAP_RETRY_S)},
            params={"jobs": settings.jobs_per_user},
        )


def my_submissions(
    db: Session,
    user: User,
    problem_id: str | None,
    limit: int,
    verdict: str | None = None,
    mode: str | None = None,
) -> list[SubmissionSummary]:
    """The reader's own submissions, newest first (of one problem, verdict or mode, if given)."""
    query = select(Submission).where(Submission.user_id == user.id, Submission.mode != Mode.SCRATCH)
    if problem_id is not None:
        query = query.where(Submission.problem_id == problem_id)
    if verdict is not None:
        query = query.where(Submission.verdict == verdict)
    if mode is not None:
        query = query.where(Submission.mode == mode)
    rows = db.scalars(query.order_by(Submission.id.desc()).limit(limit)).all()
    return [summary(s) for s in rows]


def may_read(db: Session, reader: User, owner_id: int) -> bool:
    """The owner, an admin, or an instructor of a class the owner is in (web.classes.access)."""
    return owner_id == reader.id or teaches(db, reader, owner_id)


# A submission with the content hash of the version it was judged against, in one query.
_SUBMISSION_AND_VERSION = (
    select(Submission, ProblemVersion.content_hash)
    .outerjoin(ProblemVersion, ProblemVersion.id == Submission.problem_version_id)
    .where(Submission.id == bindparam("id"))
)


def read_submission(db: Session, submission_id: int, user: User, lang: str = "zh") -> SubmissionDetail:
    """One submission as `user` may see it: their own, any for an admin, a member's of their
    class for an instructor (read-only: the page offers no rejudge and no editor); else 404."""
    found = db.execute(_SUBMISSION_AND_VERSION, {"id": submission_id}).first()
    # Someone else's submission is "not found", so ids reveal nothing.
    # A scratch run is shown by its own routes only (web.scratch): not a submission here.
    if found is None or found[0].mode == Mode.SCRATCH or not may_read(db, user, found[0].user_id):
        raise not_found("submission", submission_id)
    sub: Submission = found[0]
    version: str | None = found[1]
    owner = db.get(User, sub.user_id)  # the reader themself: no query (the identity map has them)
    shown = detail(sub, owner.username if owner else "?", version, user.is_admin, lang)
    if sub.status == SubmissionStatus.QUEUED:
        shown.ahead = queued_ahead(db, sub.id)
    return shown


def read_submission_now(db: Session, submission_id: int, user: User, lang: str = "zh") -> SubmissionDetail:
    """`read_submission` as the database has it now; the read is ended at once."""
    try:
        db.expire_all()  # the identity map keeps the last read's row: read it again
        return read_submission(db, submission_id, user, lang)
    finally:
        db.rollback()  # give the connection back between reads
