"""The queue's guarantees, on real SQLite and real PostgreSQL: one claim per job, leases,
results guarded by the lease, give-up after the last attempt, rejudge."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from tests.web.factories import result_of
from web.auth.models import User
from web.db import make_engine, make_sessionmaker, transaction
from web.judging import queue
from web.judging.records import StoredReport, read_report, read_scratch
from web.migrate import upgrade
from web.scores.models import Score
from web.submissions.models import Submission, SubmissionEvent


@pytest.fixture(params=["sqlite", "postgresql"])
def factory(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[sessionmaker[Session]]:
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'queue.db'}"
    else:
        url = request.getfixturevalue("postgres_url")
    engine = make_engine(url)
    upgrade(engine)
    yield make_sessionmaker(engine)
    engine.dispose()


def add_jobs(factory: sessionmaker[Session], n: int, mode: str = "submit") -> tuple[int, list[int]]:
    with transaction(factory) as s:
        user = User(username=f"u{time.monotonic_ns()}", password_hash="x")
        s.add(user)
        s.flush()
        subs = [Submission(user_id=user.id, problem_id="204", mode=mode, code=f"# {i}") for i in range(n)]
        s.add_all(subs)
        s.flush()
        return user.id, [sub.id for sub in subs]


def report(score: int) -> StoredReport:
    return result_of(score)


def events(factory: sessionmaker[Session], sub_id: int, kind: str) -> int:
    with factory() as s:
        query = select(func.count()).where(
            SubmissionEvent.submission_id == sub_id, SubmissionEvent.kind == kind
        )
        return int(s.scalar(query) or 0)


def test_concurrent_claims_take_each_job_once(factory: sessionmaker[Session]) -> None:
    _, ids = add_jobs(factory, 40)
    taken: list[int] = []
    lock = threading.Lock()

    def grab(name: str) -> None:
        while True:
            c = queue.claim(factory, name, lease_s=60, max_attempts=3)
            if c is None:
                with factory() as s:  # a lost race returns None too: stop only when nothing is queued
                    if not s.scalar(select(func.count()).where(Submission.status == "queued")):
                        return
                continue
            with lock:
                taken.append(c.submission_id)

    threads = [threading.Thread(target=grab, args=(f"w{i}",)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert sorted(taken) == sorted(ids)  # every job once: none lost, none twice


LEASE_S = 2.0


def test_an_expired_lease_returns_the_job_and_a_late_worker_cannot_write(
    factory: sessionmaker[Session],
) -> None:
    user_id, (sub_id,) = add_jobs(factory, 1)
    # Long enough that the second claim comes inside it on a busy machine, short enough to wait.
    first = queue.claim(factory, "dead-worker", lease_s=LEASE_S, max_attempts=3)
    assert first is not None and first.attempts == 1
    assert queue.claim(factory, "other", lease_s=60, max_attempts=3) is None  # still leased
    time.sleep(LEASE_S + 0.5)
    second = queue.claim(factory, "other", lease_s=60, max_attempts=3)
    assert second is not None and second.submission_id == sub_id and second.attempts == 2
    # The first worker wakes up late: its heartbeat and its result are refused.
    assert queue.heartbeat(factory, first, 60) is False
    assert queue.complete(factory, first, report(100), None, "dead-worker") is False
    assert queue.complete(factory, second, report(60), None, "other") is True
    with factory() as s:
        sub = s.get(Submission, sub_id)
        assert sub is not None and (sub.status, sub.score, sub.worker) == ("done", 60, "other")
        score = s.get(Score, (user_id, "204"))
        assert score is not None and score.best_score == 60
    assert (events(factory, sub_id, "claimed"), events(factory, sub_id, "done")) == (2, 1)


def test_after_the_last_attempt_the_job_ends_as_system_error(factory: sessionmaker[Session]) -> None:
    _, (sub_id,) = add_jobs(factory, 1)
    for _ in range(3):
        assert queue.claim(factory, "crashy", lease_s=0.05, max_attempts=3) is not None
        time.sleep(0.1)
    assert queue.claim(factory, "next", lease_s=60, max_attempts=3) is None
    with factory() as s:
        sub = s.get(Submission, sub_id)
        assert sub is not None and (sub.status, sub.verdict, sub.attempts) == ("done", "SE", 3)
        assert "3 times" in read_report(sub.report).warnings[0].en
    assert events(factory, sub_id, "failed") == 1


def test_a_scratch_run_given_up_on_ends_as_a_scratch_result(factory: sessionmaker[Session]) -> None:
    """Its page reads a scratch run's result: the system error is one, saying why."""
    _, (sub_id,) = add_jobs(factory, 1, mode="scratch")
    for _ in range(3):
        claimed = queue.claim(factory, "crashy", lease_s=60, max_attempts=3)
        assert claimed is not None
        queue.release(factory, claimed, "crashy", "RuntimeError: engine exploded", max_attempts=3)
    with factory() as s:
        sub = s.get(Submission, sub_id)
        assert sub is not None and (sub.status, sub.verdict) == ("done", "SE")
        result = read_scratch(sub.report)
        assert result.status == "stopped" and result.text is not None
        assert "engine exploded" in result.text.en and "3" in result.text.zh


def test_a_worker_error_requeues_then_gives_up(factory: sessionmaker[Session]) -> None:
    _, (sub_id,) = add_jobs(factory, 1)
    for attempt in range(1, 4):
        c = queue.claim(factory, "w", lease_s=60, max_attempts=3)
        assert c is not None and c.attempts == attempt
        queue.release(factory, c, "w", "RuntimeError: engine exploded", max_attempts=3)
    with factory() as s:
        sub = s.get(Submission, sub_id)
        assert sub is not None and (sub.status, sub.verdict) == ("done", "SE")
    assert (events(factory, sub_id, "requeued"), events(factory, sub_id, "failed")) == (2, 1)


def rejudged(factory: sessionmaker[Session], sub_id: int, result: StoredReport | None) -> None:
    """An admin's rejudge of `sub_id`, judged to `result` (None: the worker fails every attempt)."""
    with transaction(factory) as s:
        assert queue.rejudge(s, [sub_id]) == 1
    for _ in range(1 if result is not None else 3):
        c = queue.claim(factory, "w", lease_s=60, max_attempts=3)
        assert c is not None and c.submission_id == sub_id
        if result is None:
            queue.release(factory, c, "w", "RuntimeError: engine exploded", max_attempts=3)
        else:
            assert queue.complete(factory, c, result, None, "w")


def kept(factory: sessionmaker[Session], sub_id: int) -> tuple[object, ...]:
    with factory() as s:
        sub = s.get(Submission, sub_id)
        assert sub is not None
        return (sub.verdict, sub.score, sub.kept_verdict, sub.kept_score)


def test_scores_keep_the_best_and_a_rejudge_never_lowers_it(factory: sessionmaker[Session]) -> None:
    user_id, ids = add_jobs(factory, 3)
    for score in (40, 90, 70):
        c = queue.claim(factory, "w", lease_s=60, max_attempts=3)
        assert c is not None
        assert queue.complete(factory, c, report(score), None, "w")
    with factory() as s:
        best = s.get(Score, (user_id, "204"))
        assert best is not None and (best.best_score, best.best_submission_id) == (90, ids[1])
    with transaction(factory) as s:
        assert queue.rejudge(s, [ids[1]]) == 1
    c = queue.claim(factory, "w", lease_s=60, max_attempts=3)
    assert c is not None and c.submission_id == ids[1] and c.attempts == 1
    assert queue.complete(factory, c, report(10), None, "w")
    # The rejudged result is the submission's; the 90 it had is kept and still its best.
    assert kept(factory, ids[1]) == ("WA", 10, "WA", 90)
    with factory() as s:
        best = s.get(Score, (user_id, "204"))
        assert best is not None and (best.best_score, best.best_submission_id) == (90, ids[1])
    assert events(factory, ids[1], "done") == 2 and events(factory, ids[1], "rejudge") == 1

    # Lower again, or given up on as SE: the 90 stays, not the 10 in between.
    rejudged(factory, ids[1], report(20))
    assert kept(factory, ids[1]) == ("WA", 20, "WA", 90)
    rejudged(factory, ids[1], None)
    assert kept(factory, ids[1]) == ("SE", 0, "WA", 90)
    # As good or better: nothing is kept any more, and the best follows the new result.
    rejudged(factory, ids[1], report(100))
    assert kept(factory, ids[1]) == ("AC", 100, None, None)
    with factory() as s:
        best = s.get(Score, (user_id, "204"))
        assert best is not None and (best.best_score, best.solved) == (100, True)


def test_runs_are_never_scored(factory: sessionmaker[Session]) -> None:
    user_id, _ = add_jobs(factory, 1, mode="run")
    c = queue.claim(factory, "w", lease_s=60, max_attempts=3)
    assert c is not None and queue.complete(factory, c, report(100), None, "w")
    with factory() as s:
        assert s.get(Score, (user_id, "204")) is None


def test_two_results_for_one_user_at_once_both_land(factory: sessionmaker[Session]) -> None:
    # Found by the two-worker test: both transactions created the user's score row at once.
    for _ in range(5):
        user_id, _ = add_jobs(factory, 2)
        claims = [queue.claim(factory, f"w{i}", lease_s=60, max_attempts=3) for i in range(2)]
        assert all(claims)
        barrier = threading.Barrier(2)
        written: list[bool] = []

        def finish(c: queue.Claim, score: int, barrier: threading.Barrier, written: list[bool]) -> None:
            barrier.wait()
            written.append(queue.complete(factory, c, report(score), None, "w"))

        threads = [
            threading.Thread(target=finish, args=(c, s, barrier, written))
            for c, s in zip(claims, (30, 80), strict=True)
            if c is not None
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=30)
        assert written == [True, True]
        with factory() as s:
            best = s.get(Score, (user_id, "204"))
            assert best is not None and best.best_score == 80
