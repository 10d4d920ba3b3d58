"""The queue is fair, on real SQLite and real PostgreSQL: one account's many jobs cannot keep
another's waiting, a rejudge of a whole problem waits behind what learners are waiting for but
is still judged in the end, and an account may have only so many jobs waiting or being judged."""

from __future__ import annotations

import statistics
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select, update
from sqlalchemy.orm import Session, sessionmaker

from tests.factories import make_package
from tests.web.factories import (
    bearer,
    make_client,
    make_settings,
    platform_of,
    register,
    result_of,
    unique_name,
)
from web.auth.models import User
from web.db import make_engine, make_sessionmaker, transaction, utcnow
from web.judging import queue
from web.migrate import upgrade
from web.submissions.models import EventKind, Submission, SubmissionEvent, SubmissionStatus

CORRECT = "def f(x):\n    return x * 2\n"


@pytest.fixture
def factory(database_url: str) -> Iterator[sessionmaker[Session]]:
    engine = make_engine(database_url)
    upgrade(engine)
    yield make_sessionmaker(engine)
    engine.dispose()


# ---------------------------------------------------------------- helpers


def new_user(factory: sessionmaker[Session]) -> int:
    with transaction(factory) as s:
        user = User(username=unique_name(), password_hash="x")
        s.add(user)
        s.flush()
        return user.id


def enqueue(factory: sessionmaker[Session], user_id: int, *modes: str) -> list[int]:
    """Queue jobs as the submission service does (one row each, in this order)."""
    with transaction(factory) as s:
        subs = [Submission(user_id=user_id, problem_id="204", mode=m, code="# job") for m in modes]
        s.add_all(subs)
        s.flush()
        return [sub.id for sub in subs]


def judged(factory: sessionmaker[Session], user_id: int, n: int, problem_id: str = "204") -> list[int]:
    """`n` submits of the account, judged long ago (what an admin may rejudge)."""
    long_ago = utcnow() - timedelta(days=30)
    with transaction(factory) as s:
        subs = [
            Submission(
                user_id=user_id,
                problem_id=problem_id,
                mode="submit",
                code=CORRECT,
                status=SubmissionStatus.DONE,
                verdict="AC",
                score=100,
                max_score=100,
                created_at=long_ago,
                started_at=long_ago,
                finished_at=long_ago,
            )
            for _ in range(n)
        ]
        s.add_all(subs)
        s.flush()
        return [sub.id for sub in subs]


def rejudge(factory: sessionmaker[Session], ids: list[int]) -> None:
    with transaction(factory) as s:
        assert queue.rejudge(s, ids) == len(ids)


def take(factory: sessionmaker[Session], aging_s: float = 3600.0) -> int:
    """A worker's claim, judged at once: the id it took."""
    c = queue.claim(factory, "w", lease_s=60, max_attempts=3, aging_s=aging_s)
    assert c is not None, "nothing was claimable"
    assert queue.complete(factory, c, result_of(0, 0), None, "w")
    return c.submission_id


def grab(factory: sessionmaker[Session], aging_s: float = 3600.0) -> int:
    """A worker's claim, still running after this."""
    c = queue.claim(factory, "w", lease_s=60, max_attempts=3, aging_s=aging_s)
    assert c is not None, "nothing was claimable"
    return c.submission_id


# ---------------------------------------------------------------- fairness across accounts


def test_another_learners_submit_is_claimed_next_not_after_the_first_learners_runs(
    factory: sessionmaker[Session],
) -> None:
    """The issue: one learner's 20 runs kept another learner's submit waiting for all of them."""
    greedy, patient = new_user(factory), new_user(factory)
    runs = enqueue(factory, greedy, *["run"] * 20)
    assert take(factory) == runs[0]
    (submit,) = enqueue(factory, patient, "submit")
    assert take(factory) == submit  # next, though 19 runs came before it
    # With two workers busy on the greedy learner's runs the submit is still the next claim.
    busy = [grab(factory), grab(factory)]
    assert busy == runs[1:3]
    (again,) = enqueue(factory, patient, "submit")
    assert take(factory) == again


def test_accounts_take_turns_and_a_learners_runs_go_before_their_submits(
    factory: sessionmaker[Session],
) -> None:
    a, b, c = new_user(factory), new_user(factory), new_user(factory)
    a_jobs = enqueue(factory, a, "submit", "run", "run")
    b_jobs = enqueue(factory, b, "run", "run")
    c_jobs = enqueue(factory, c, "scratch")
    order = [take(factory) for _ in range(6)]
    # Round robin by who was served least recently; within an account runs before submits.
    assert order == [a_jobs[1], b_jobs[0], c_jobs[0], a_jobs[2], b_jobs[1], a_jobs[0]]


def test_within_one_round_among_many_learners(factory: sessionmaker[Session]) -> None:
    """Ten learners with five jobs each, then a newcomer's submit: it is claimed before any
    learner gets a second turn, so within one round (here: next, as nobody served it yet)."""
    learners = [new_user(factory) for _ in range(10)]
    for learner in learners:
        enqueue(factory, learner, *["run"] * 5)
    first_round = [take(factory) for _ in range(4)]
    newcomer = new_user(factory)
    (submit,) = enqueue(factory, newcomer, "submit")
    claimed = [take(factory) for _ in range(7)]
    assert submit in claimed[:7]  # before the round of the ten learners ends
    with factory() as s:
        owner = dict(s.execute(select(Submission.id, Submission.user_id)).all())
    before = [owner[i] for i in [*first_round, *claimed][: len(first_round) + claimed.index(submit)]]
    assert len(before) == len(set(before)), "a learner had a second turn before the newcomer's first"


# ---------------------------------------------------------------- rejudges


def test_a_rejudge_waits_behind_new_runs_and_is_claimed_once_it_has_aged(
    factory: sessionmaker[Session],
) -> None:
    aging_s = 2.0
    learner, other = new_user(factory), new_user(factory)
    old = judged(factory, other, 3)
    rejudged_at = utcnow()
    rejudge(factory, old)
    # Fresh runs keep coming: while the rejudge is young, each is claimed before it.
    while utcnow() < rejudged_at + timedelta(seconds=aging_s * 0.75):
        (run,) = enqueue(factory, learner, "run")
        assert take(factory, aging_s) == run, "a young rejudge went before a learner's run"
        time.sleep(0.05)
    time.sleep(max(0.0, (rejudged_at + timedelta(seconds=aging_s) - utcnow()).total_seconds()) + 0.1)
    # It has waited long enough: it takes a turn, though new runs keep coming.
    (run,) = enqueue(factory, learner, "run")
    assert take(factory, aging_s) == old[0]
    # Then they take turns: the learner, the rejudge, the learner, ...
    assert take(factory, aging_s) == run
    (run,) = enqueue(factory, learner, "run")
    assert take(factory, aging_s) == old[1]
    assert take(factory, aging_s) == run
    assert take(factory, aging_s) == old[2]
    with factory() as s:  # rejudged rows are marked (the events say so too)
        marks = s.scalars(select(Submission.rejudged_at).where(Submission.id.in_(old))).all()
        assert len(marks) == 3 and all(m is not None and m >= rejudged_at for m in marks)
        kinds = s.scalars(select(SubmissionEvent.kind).where(SubmissionEvent.submission_id == old[0])).all()
        assert EventKind.REJUDGE in kinds


def test_a_rejudge_of_many_learners_takes_one_turn_a_round(factory: sessionmaker[Session]) -> None:
    """Aged, the rejudge is one party in the turns: the learners it touches (who were served
    long ago) do not each get a turn before the learners who are waiting now."""
    touched = [new_user(factory) for _ in range(5)]
    old = [i for user in touched for i in judged(factory, user, 2)]
    rejudge(factory, old)
    waiting = [new_user(factory) for _ in range(3)]
    for user in waiting:
        enqueue(factory, user, "run")
        take(factory)  # each has been served once already
    runs = [enqueue(factory, user, "run")[0] for user in waiting]
    order = [take(factory, aging_s=0.001) for _ in range(len(runs) + 1)]
    assert sorted(order) == sorted([*runs, old[0]])  # aged: the rejudge took one turn, not ten


# ---------------------------------------------------------------- the claim stays cheap


def test_a_claim_among_a_thousand_queued_jobs_stays_cheap(
    factory: sessionmaker[Session], database_url: str
) -> None:
    learners = [new_user(factory) for _ in range(100)]
    for learner in learners:
        enqueue(factory, learner, *["run", "submit", "run", "scratch", "submit"])
    admin_rejudge = judged(factory, new_user(factory), 500)
    rejudge(factory, admin_rejudge)
    with factory() as s:
        queued = s.scalar(select(func.count()).where(Submission.status == "queued"))
    assert queued == 1000
    times = []
    for _ in range(30):
        started = time.perf_counter()
        c = queue.claim(factory, "w", lease_s=60, max_attempts=3)
        times.append(time.perf_counter() - started)
        assert c is not None
        queue.complete(factory, c, result_of(0, 0), None, "w")
    median_ms = statistics.median(times) * 1000
    dialect = database_url.split(":", 1)[0].split("+", 1)[0]
    print(f"\nclaim among 1000 queued ({dialect}): median {median_ms:.1f} ms, max {max(times) * 1000:.1f} ms")
    assert median_ms < 250, f"a claim took {median_ms:.1f} ms"


# ---------------------------------------------------------------- real workers


def make_admin(client: TestClient) -> str:
    name, token = register(client, unique_name("admin"))
    with platform_of(client).factory() as s, s.begin():
        s.execute(update(User).where(User.username == name).values(role="admin"))
    return token


def events_of(factory: sessionmaker[Session], sub_id: int) -> dict[str, Any]:
    with factory() as s:
        rows = s.execute(
            select(SubmissionEvent.kind, SubmissionEvent.at).where(SubmissionEvent.submission_id == sub_id)
        ).all()
    return {kind: at for kind, at in rows}


def others(factory: sessionmaker[Session], kind: EventKind, sub_id: int, after: Any, before: Any) -> int:
    """Events of `kind` of other submissions between two moments."""
    with factory() as s:
        counted = select(func.count()).where(
            SubmissionEvent.kind == kind,
            SubmissionEvent.submission_id != sub_id,
            SubmissionEvent.at > after,
            SubmissionEvent.at < before,
        )
        return int(s.scalar(counted) or 0)


@pytest.mark.slow
def test_a_run_is_judged_before_a_rejudge_of_two_hundred_with_real_workers(
    tmp_path: Path, database_url: str
) -> None:
    problems = tmp_path / "problems"
    problems.mkdir()
    make_package(problems)  # problem 901: doubling, judged for real on the local backend
    workers = 2
    settings = make_settings(tmp_path, database_url, problems_dir=problems, workers=workers)
    with make_client(settings) as client:
        factory = platform_of(client).factory
        for learner in [new_user(factory) for _ in range(20)]:
            judged(factory, learner, 10, problem_id="901")
        admin = make_admin(client)
        _, token = register(client)
        res = client.post("/api/admin/problems/901/rejudge", headers=bearer(admin))
        assert res.status_code == 200 and res.json() == {"queued": 200}, res.text
        body = {"problem_id": "901", "code": CORRECT, "mode": "run"}
        res = client.post("/api/submissions", json=body, headers=bearer(token))
        assert res.status_code == 202, res.text
        run = res.json()["id"]
        queued_at = events_of(factory, run)[EventKind.QUEUED]
        started = time.monotonic()
        # Its verdict comes after the judgements that were running (one per worker) and its own,
        # and the claims that raced its arrival (one per worker): never after the queue's 200.
        # Fails as soon as more rejudges than that were judged while it waited.
        most = 2 * workers
        while (status := client.get(f"/api/submissions/{run}", headers=bearer(token)).json())[
            "status"
        ] != "done":
            judged_meanwhile = others(factory, EventKind.DONE, run, queued_at, utcnow())
            assert judged_meanwhile <= most, f"{judged_meanwhile} rejudges were judged while the run waited"
            assert time.monotonic() - started < 120, "the run was not judged within 120 s"
            time.sleep(0.1)
        waited = time.monotonic() - started
        assert status["verdict"] == "AC"
        at = events_of(factory, run)
        claimed_meanwhile = others(
            factory, EventKind.CLAIMED, run, at[EventKind.QUEUED], at[EventKind.CLAIMED]
        )
        judged_meanwhile = others(factory, EventKind.DONE, run, at[EventKind.QUEUED], at[EventKind.DONE])
        with factory() as s:
            spans = s.execute(
                select(Submission.started_at, Submission.finished_at).where(
                    Submission.status == "done", Submission.rejudged_at.is_not(None)
                )
            ).all()
    spent = [(f - c).total_seconds() for c, f in spans if c and f]  # none if the run came first
    judgement = f"{statistics.median(spent):.1f} s" if spent else "none finished yet"
    print(
        f"\nrun judged {waited:.1f} s after it was queued behind 200 rejudges; {judged_meanwhile} "
        f"rejudges were judged meanwhile, {claimed_meanwhile} claimed (a rejudge's judgement: {judgement})"
    )
    assert claimed_meanwhile <= workers  # only claims that raced its arrival
    assert judged_meanwhile <= most


# ---------------------------------------------------------------- the per-account cap


def scratch_body() -> dict[str, Any]:
    return {"problem_id": "204", "code": "x = 1\n", "snippet": "1"}


def post_job(client: TestClient, token: str, kind: str) -> Any:
    if kind == "scratch":
        return client.post("/api/scratch", json=scratch_body(), headers=bearer(token))
    body = {"problem_id": "204", "code": "x = 1\n", "mode": kind}
    return client.post("/api/submissions", json=body, headers=bearer(token))


def assert_too_many_jobs(res: Any) -> None:
    assert res.status_code == 429, res.text
    assert res.json()["error"]["code"] == "too_many_jobs", res.text
    assert "3" in res.json()["error"]["message"]
    assert int(res.headers["Retry-After"]) >= 1


def test_an_account_over_its_cap_of_unfinished_jobs_is_refused(tmp_path: Path, database_url: str) -> None:
    settings = make_settings(tmp_path, database_url, workers=0, jobs_per_user=3)
    with make_client(settings) as client:
        factory = platform_of(client).factory
        _, alice = register(client)
        _, bob = register(client)
        accepted = [post_job(client, alice, kind) for kind in ("run", "submit", "scratch")]
        assert [r.status_code for r in accepted] == [202, 202, 202], [r.text for r in accepted]
        for kind in ("run", "submit", "scratch"):  # each way in is refused, as a rate limit is
            assert_too_many_jobs(post_job(client, alice, kind))
        with factory() as s:  # nothing of the refused jobs was kept
            assert s.scalar(select(func.count()).select_from(Submission)) == 3
        assert post_job(client, bob, "submit").status_code == 202  # per account, not for everyone
        # A job being judged still counts; a judged one does not.
        first, second = (r.json()["id"] for r in accepted[:2])
        with factory() as s, s.begin():
            s.execute(update(Submission).where(Submission.id == first).values(status="running"))
            s.execute(update(Submission).where(Submission.id == second).values(status="done", verdict="AC"))
        assert post_job(client, alice, "run").status_code == 202
        assert_too_many_jobs(post_job(client, alice, "run"))
        # An admin's rejudge of the account's judged submissions is not the account's doing.
        with factory() as s, s.begin():
            s.execute(
                update(Submission)
                .where(Submission.user_id != 0)
                .values(status="done", verdict="AC", score=100, max_score=100)
            )
        res = client.post("/api/admin/problems/204/rejudge", headers=bearer(make_admin(client)))
        assert res.status_code == 200 and res.json()["queued"] == 4, res.text  # scratch runs are not rejudged
        assert [post_job(client, alice, k).status_code for k in ("run", "submit", "scratch", "run")] == [
            202,
            202,
            202,
            429,
        ]


def test_requests_at_once_cannot_go_over_the_cap(tmp_path: Path, database_url: str) -> None:
    settings = make_settings(tmp_path, database_url, workers=0, jobs_per_user=3)
    with make_client(settings) as client:
        _, alice = register(client)
        with ThreadPoolExecutor(8) as pool:
            codes = sorted(pool.map(lambda kind: post_job(client, alice, kind).status_code, ["run"] * 8))
        assert codes == [202] * 3 + [429] * 5
