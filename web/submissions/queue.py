"""The submissions table as a durable queue: enqueue, claim with a lease, heartbeat, finish.

A claim takes the oldest queued row, or a running one whose lease has run out (its worker
died). PostgreSQL picks it with FOR UPDATE SKIP LOCKED, so concurrent workers never wait
on each other. On SQLite the pick is a plain read and the claim an UPDATE guarded by the
same condition, checked by its row count: of two workers racing for a row only one
update matches (SQLite has one writer at a time). A claim is one transaction of three
statements: end what ran out of attempts, take a row (UPDATE ... RETURNING what the worker
needs), record the event.

Every later write is guarded by the claim's lease token. A worker that lost its lease (it
stalled, another took the job) cannot write a result, so a job is never judged twice into
the scores. The result, its events and the score update are one transaction.

Each change is announced (web.notify) in the transaction that makes it: a queued or requeued
job to idle workers, a claimed or finished one to its long-polling readers, on every host
when the database is PostgreSQL.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from sqlalchemy import and_, func, or_, select, update
from sqlalchemy.orm import Session, sessionmaker

import web.models  # noqa: F401 - every mapper must be known before a flush (users, scores, ...)
from judge.report import Report
from judge.verdicts import Verdict
from web.db import transaction, utcnow
from web.notify import Notices, Topic
from web.scores.service import refresh_score
from web.submissions.models import EventKind, Mode, Submission, SubmissionEvent, SubmissionStatus


@dataclass(frozen=True)
class Claim:
    submission_id: int
    lease_token: str
    attempts: int
    user_id: int
    problem_id: str
    mode: Mode
    code: str
    snippet: str = ""  # a scratch run's (Mode.SCRATCH)


def _claimable(now: Any) -> Any:
    expired = and_(Submission.status == SubmissionStatus.RUNNING, Submission.lease_expires_at < now)
    return or_(Submission.status == SubmissionStatus.QUEUED, expired)


def fail_exhausted(session: Session, max_attempts: int, notices: Notices | None = None) -> list[int]:
    """End as SE the jobs whose lease ran out on their last allowed attempt."""
    now = utcnow()
    rows = session.scalars(
        select(Submission).where(
            Submission.status == SubmissionStatus.RUNNING,
            Submission.lease_expires_at < now,
            Submission.attempts >= max_attempts,
        )
    ).all()
    for sub in rows:
        message = (
            f"评测失败 {sub.attempts} 次（评测进程每次都中途停止），已放弃；这不是你的代码的问题。\n"
            f"Judging failed {sub.attempts} times (the worker stopped each time); "
            "this is not your code's fault."
        )
        _give_up(session, sub, message, worker=None, detail=message, notices=notices)
    return [s.id for s in rows]


def _give_up(
    session: Session, sub: Submission, message: str, worker: str | None, detail: str, notices: Notices | None
) -> None:
    """End a job as SE after its last attempt: the result, the `failed` event, the score."""
    sub.status, sub.verdict, sub.score = SubmissionStatus.DONE, Verdict.SE, 0
    sub.report = Report.system_error(sub.problem_id, message).to_dict()
    sub.finished_at, sub.lease_token, sub.lease_expires_at = utcnow(), None, None
    session.add(
        SubmissionEvent(submission_id=sub.id, kind=EventKind.FAILED, worker=worker, detail=detail[:2000])
    )
    if sub.mode == Mode.SUBMIT:
        refresh_score(session, sub.user_id, sub.problem_id)
    announce(notices, session, sub.id)


def announce(notices: Notices | None, session: Session, submission_id: int) -> None:
    """Tell long-polling readers (of every process) that `submission_id` changed, at commit."""
    if notices is not None:
        notices.publish(session, Topic.SUBMISSION, str(submission_id))


def announce_queued(notices: Notices | None, session: Session, submission_ids: list[int]) -> None:
    """Wake idle workers (of every process) for newly queued jobs, at commit: one notice for
    any number of jobs (each woken worker takes what the queue holds)."""
    if notices is not None and submission_ids:
        notices.publish(session, Topic.QUEUED, str(submission_ids[0]))


def claim(
    factory: sessionmaker[Session],
    worker: str,
    lease_s: float,
    max_attempts: int,
    notices: Notices | None = None,
) -> Claim | None:
    with transaction(factory) as session:
        fail_exhausted(session, max_attempts, notices)
        now = utcnow()
        pick = select(Submission.id).where(_claimable(now)).order_by(Submission.id).limit(1)
        if session.get_bind().dialect.name == "postgresql":
            pick = pick.with_for_update(skip_locked=True)
        token = uuid.uuid4().hex
        # The pick and the claim in one statement; the row comes back with what judging needs.
        # The claim's condition is checked again on the row itself: on SQLite, of two workers
        # that picked the same row only the first update still matches it.
        row = session.execute(
            update(Submission)
            .where(Submission.id == pick.scalar_subquery(), _claimable(now))
            .values(
                status=SubmissionStatus.RUNNING,
                lease_token=token,
                lease_expires_at=now + timedelta(seconds=lease_s),
                attempts=Submission.attempts + 1,
                worker=worker,
                started_at=now,
            )
            .returning(
                Submission.id,
                Submission.attempts,
                Submission.user_id,
                Submission.problem_id,
                Submission.mode,
                Submission.code,
                Submission.snippet,
            )
            .execution_options(synchronize_session=False)
        ).first()
        if row is None:
            return None  # nothing queued, or another worker won the race: try again on the next poll
        sub_id, attempts, user_id, problem_id, mode, code, snippet = row
        session.add(SubmissionEvent(submission_id=sub_id, kind=EventKind.CLAIMED, worker=worker))
        announce(notices, session, sub_id)
        return Claim(sub_id, token, attempts, user_id, problem_id, Mode(mode), code, snippet or "")


def _guarded(claim: Claim) -> Any:
    return and_(
        Submission.id == claim.submission_id,
        Submission.status == SubmissionStatus.RUNNING,
        Submission.lease_token == claim.lease_token,
    )


def heartbeat(factory: sessionmaker[Session], claim: Claim, lease_s: float) -> bool:
    """Extend the lease; False when it was lost (the job went to another worker)."""
    with transaction(factory) as session:
        result = session.execute(
            update(Submission)
            .where(_guarded(claim))
            .values(lease_expires_at=utcnow() + timedelta(seconds=lease_s))
            .execution_options(synchronize_session=False)
        )
        return bool(result.rowcount == 1)  # type: ignore[attr-defined]


def complete(
    factory: sessionmaker[Session],
    claim: Claim,
    report: dict[str, Any],
    problem_version_id: int | None,
    worker: str,
    notices: Notices | None = None,
) -> bool:
    """Write the verdict, the case results, the event and the score in one transaction.

    False (and nothing written) when the lease was lost.
    """
    with transaction(factory) as session:
        now = utcnow()
        result = session.execute(
            update(Submission)
            .where(_guarded(claim))
            .values(
                status=SubmissionStatus.DONE,
                verdict=str(report["verdict"]),
                score=int(report["score"]),
                max_score=int(report["max_score"]),
                report=report,
                problem_version_id=problem_version_id,
                finished_at=now,
                lease_token=None,
                lease_expires_at=None,
            )
            .execution_options(synchronize_session=False)
        )
        if result.rowcount != 1:  # type: ignore[attr-defined]
            return False
        session.add(SubmissionEvent(submission_id=claim.submission_id, kind=EventKind.DONE, worker=worker))
        if claim.mode == Mode.SUBMIT:
            refresh_score(session, claim.user_id, claim.problem_id)
        announce(notices, session, claim.submission_id)
        return True


def release(
    factory: sessionmaker[Session],
    claim: Claim,
    worker: str,
    why: str,
    max_attempts: int,
    notices: Notices | None = None,
) -> None:
    """Give a job back after the worker failed on it (not the learner's code): retry, or SE."""
    with transaction(factory) as session:
        sub = session.scalar(select(Submission).where(_guarded(claim)))
        if sub is None:
            return
        if sub.attempts >= max_attempts:
            reason = " ".join(why.split())  # one line: the message's two languages are its two lines
            message = f"评测失败 {sub.attempts} 次：{reason}\nJudging failed {sub.attempts} times: {reason}"
            _give_up(session, sub, message, worker, why, notices)
            return
        sub.status, sub.lease_token, sub.lease_expires_at = SubmissionStatus.QUEUED, None, None
        session.add(
            SubmissionEvent(submission_id=sub.id, kind=EventKind.REQUEUED, worker=worker, detail=why[:2000])
        )
        announce(notices, session, sub.id)  # running -> queued, for its readers
        announce_queued(notices, session, [sub.id])


def rejudge(session: Session, submission_ids: list[int], notices: Notices | None = None) -> int:
    """Put judged submissions back in the queue (admins); scores follow each new result."""
    subs = session.scalars(
        select(Submission).where(
            Submission.id.in_(submission_ids), Submission.status == SubmissionStatus.DONE
        )
    ).all()
    for sub in subs:
        sub.status, sub.attempts = SubmissionStatus.QUEUED, 0
        sub.lease_token, sub.lease_expires_at = None, None
        # The old score stays until the new result replaces it, so that rejudging a problem
        # never makes a best score dip while its submissions wait in the queue.
        sub.verdict, sub.report, sub.finished_at = None, None, None
        session.add(SubmissionEvent(submission_id=sub.id, kind=EventKind.REJUDGE))
    announce_queued(notices, session, [sub.id for sub in subs])
    return len(subs)


def queue_depth(session: Session) -> dict[str, int]:
    rows = session.execute(select(Submission.status, func.count()).group_by(Submission.status)).all()
    depth = {str(status): 0 for status in SubmissionStatus}
    depth.update({status: int(n) for status, n in rows})
    return depth
