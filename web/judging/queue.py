"""The submissions table as a durable queue: enqueue, claim with a lease, heartbeat, finish.

A claim takes a queued row, or a running one whose lease has run out (its worker died), in a
fair order (`claim_order`): the learners' own jobs before an admin's rejudge younger than
`aging_s`, then by turns (the account, or the rejudge, served least recently first), then
within an account runs and scratch runs before submits, the one queued first first. So one
account's many jobs keep another's waiting one judgement at most, a rejudge of a whole
problem does not put the learners' runs behind it, and every job is claimed in the end.
PostgreSQL picks it with FOR UPDATE SKIP LOCKED, so concurrent workers never wait
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
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import and_, case, func, or_, select, update
from sqlalchemy.orm import Session, aliased, sessionmaker

import web.models  # noqa: F401 - every mapper must be known before a flush (users, scores, ...)
from judge.core.messages import msg
from judge.core.texts import Text
from judge.core.verdicts import Verdict
from web.db import transaction, utcnow
from web.judging.notices import announce, announce_queued
from web.judging.records import StoredReport, StoredScratch, system_error
from web.notify import Notices
from web.problems.models import ProblemVersion
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


# How long a rejudge (or a submit, within its account) waits before it is no longer put behind
# the runs (JUDGE_QUEUE_AGING_S), by default.
AGING_S = 60.0


def _claimable(now: Any) -> Any:
    expired = and_(Submission.status == SubmissionStatus.RUNNING, Submission.lease_expires_at < now)
    return or_(Submission.status == SubmissionStatus.QUEUED, expired)


def claim_order(now: datetime, aging_s: float) -> list[Any]:
    """The claim's ORDER BY: the first row is the one to judge next.

    1. The level: a learner's own job (run, scratch run, submit) 0; a rejudge 1 until it has
       waited `aging_s`, then 0. A rejudge of a whole problem thus takes idle workers only,
       while it is young, and then takes turns with the learners (2) instead of going first.
    2. Turns: whoever was served least recently (their newest claim) goes first. Whoever is a
       learner's account for their own jobs, and one rejudge (the jobs an admin put back
       together, which share their `rejudged_at`) for its jobs, so that a rejudge of hundreds
       of old submissions gets one turn a round, not one for each learner it touches. One
       learner's many jobs take turns with everyone else's instead of going first because
       they came first. Across accounts a submit is not put behind others' runs: that would
       let one learner's runs hold everyone's submits back again.
    3. Within an account (or a rejudge): runs and scratch runs (someone is watching for the
       answer) before submits, except a submit that has waited `aging_s`; then the one queued
       first.

    Starvation-free: a rejudge is at level 0 after `aging_s`; at level 0 everyone ahead of a
    job was served less recently than its account (or rejudge) and moves behind it once
    served, and within an account a job is passed by newer ones only while it is younger than
    `aging_s`. The times are compared with bound values computed here, so the statement is the
    same on SQLite and PostgreSQL (no date arithmetic in SQL).
    """
    aged = now - timedelta(seconds=aging_s)
    queued_at = func.coalesce(Submission.rejudged_at, Submission.created_at)
    level = case((Submission.rejudged_at > aged, 1), else_=0)  # NULL (not a rejudge): 0
    # When it was last served: one index seek per candidate row, on ix_submissions_user_started
    # for an account and on ix_submissions_rejudged_started for a rejudge.
    mine, batch = aliased(Submission), aliased(Submission)
    account_served = (
        select(func.max(mine.started_at)).where(mine.user_id == Submission.user_id).scalar_subquery()
    )
    rejudge_served = (
        select(func.max(batch.started_at))
        .where(batch.rejudged_at == Submission.rejudged_at)
        .scalar_subquery()
    )
    served = case((Submission.rejudged_at.is_(None), account_served), else_=rejudge_served)
    lane = case((and_(Submission.mode == Mode.SUBMIT, queued_at > aged), 1), else_=0)
    return [level, served.asc().nulls_first(), lane, queued_at, Submission.id]


def unfinished_jobs(session: Session, user_id: int) -> int:
    """The account's own jobs that wait or are being judged (rejudges are the admins' doing, not
    counted); ix_submissions_user_status serves it."""
    counted = select(func.count()).where(
        Submission.user_id == user_id,
        Submission.status.in_([SubmissionStatus.QUEUED, SubmissionStatus.RUNNING]),
        Submission.rejudged_at.is_(None),
    )
    return int(session.scalar(counted) or 0)


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
        message = msg("judging_abandoned", attempts=sub.attempts)
        _give_up(session, sub, message, worker=None, detail=message.en, notices=notices)
    return [s.id for s in rows]


def _give_up(
    session: Session, sub: Submission, message: Text, worker: str | None, detail: str, notices: Notices | None
) -> None:
    """End a job as SE after its last attempt: the result, the `failed` event, the score."""
    sub.status, sub.verdict, sub.score = SubmissionStatus.DONE, Verdict.SE, 0
    if sub.kept_score is not None and sub.kept_score <= 0:
        sub.kept_verdict = sub.kept_score = sub.kept_max_score = sub.kept_version = None
    sub.report = system_error(sub.problem_id, message, sub.mode == Mode.SCRATCH).model_dump(mode="json")
    sub.finished_at, sub.lease_token, sub.lease_expires_at = utcnow(), None, None
    sub.progress = None
    session.add(
        SubmissionEvent(submission_id=sub.id, kind=EventKind.FAILED, worker=worker, detail=detail[:2000])
    )
    if sub.mode == Mode.SUBMIT:
        refresh_score(session, sub.user_id, sub.problem_id)
    announce(notices, session, sub.id)


def claim(
    factory: sessionmaker[Session],
    worker: str,
    lease_s: float,
    max_attempts: int,
    notices: Notices | None = None,
    aging_s: float = AGING_S,
) -> Claim | None:
    with transaction(factory) as session:
        fail_exhausted(session, max_attempts, notices)
        now = utcnow()
        pick = select(Submission.id).where(_claimable(now)).order_by(*claim_order(now, aging_s)).limit(1)
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
                progress=None,
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


def record_progress(
    factory: sessionmaker[Session],
    claim: Claim,
    progress: dict[str, Any],
    notices: Notices | None = None,
) -> bool:
    """Write how far the judgement has come (`Submission.progress`) and tell its long-polling
    readers; False when the lease was lost (nothing written)."""
    with transaction(factory) as session:
        result = session.execute(
            update(Submission)
            .where(_guarded(claim))
            .values(progress=progress)
            .execution_options(synchronize_session=False)
        )
        if result.rowcount != 1:  # type: ignore[attr-defined]
            return False
        announce(notices, session, claim.submission_id)
        return True


def queued_ahead(session: Session, submission_id: int) -> int:
    """How many jobs queued before this one still wait: what a waiting learner is told they
    are behind (the fair claim, `claim_order`, may still serve some of them later)."""
    count = session.scalar(
        select(func.count())
        .select_from(Submission)
        .where(Submission.status == SubmissionStatus.QUEUED, Submission.id < submission_id)
    )
    return int(count or 0)


def complete(
    factory: sessionmaker[Session],
    claim: Claim,
    judged: StoredReport | StoredScratch,
    problem_version_id: int | None,
    worker: str,
    notices: Notices | None = None,
) -> bool:
    """Write the verdict, the result (`judged`, stored as its record), the event and the score in
    one transaction.

    False (and nothing written) when the lease was lost.
    """
    new_score = judged.score
    # A result as good as what a rejudge kept makes the kept one moot; a lower one leaves it.
    lost = and_(Submission.kept_score.is_not(None), Submission.kept_score > new_score)
    with transaction(factory) as session:
        now = utcnow()
        result = session.execute(
            update(Submission)
            .where(_guarded(claim))
            .values(
                status=SubmissionStatus.DONE,
                verdict=judged.verdict.value,
                score=new_score,
                kept_verdict=case((lost, Submission.kept_verdict), else_=None),
                kept_score=case((lost, Submission.kept_score), else_=None),
                kept_max_score=case((lost, Submission.kept_max_score), else_=None),
                kept_version=case((lost, Submission.kept_version), else_=None),
                max_score=judged.max_score,
                report=judged.model_dump(mode="json"),
                blocked_by=judged.blocked_by if isinstance(judged, StoredReport) else None,
                problem_version_id=problem_version_id,
                finished_at=now,
                lease_token=None,
                lease_expires_at=None,
                progress=None,
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
            reason = " ".join(why.split())
            failed = msg("judging_failed", attempts=sub.attempts, reason=reason)
            _give_up(session, sub, failed, worker, why, notices)
            return
        sub.status, sub.lease_token, sub.lease_expires_at = SubmissionStatus.QUEUED, None, None
        sub.progress = None
        session.add(
            SubmissionEvent(submission_id=sub.id, kind=EventKind.REQUEUED, worker=worker, detail=why[:2000])
        )
        announce(notices, session, sub.id)  # running -> queued, for its readers
        announce_queued(notices, session, [sub.id])


def rejudge(session: Session, submission_ids: list[int], notices: Notices | None = None) -> int:
    """Put judged submissions back in the queue (admins); scores follow each new result, but
    never down: each submission keeps its best result so far (`kept_*`) until a new one is as
    good, and the learner's best counts the kept one.

    They are marked (`rejudged_at`), so the claim puts them behind the learners' own jobs and
    ages them from now, not from when they were first submitted."""
    subs = session.scalars(
        select(Submission).where(
            Submission.id.in_(submission_ids), Submission.status == SubmissionStatus.DONE
        )
    ).all()
    judged_on = {sub.problem_version_id for sub in subs} - {None}
    found = select(ProblemVersion.id, ProblemVersion.package_version).where(ProblemVersion.id.in_(judged_on))
    numbers = {version_id: number for version_id, number in session.execute(found)}
    now = utcnow()
    for sub in subs:
        if sub.verdict is not None and sub.score is not None and (sub.kept_score or 0) <= sub.score:
            # The result it has now is its best so far: keep it while the rejudge runs.
            sub.kept_verdict, sub.kept_score, sub.kept_max_score = sub.verdict, sub.score, sub.max_score
            sub.kept_version = numbers.get(sub.problem_version_id) if sub.problem_version_id else None
        sub.status, sub.attempts, sub.rejudged_at = SubmissionStatus.QUEUED, 0, now
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
