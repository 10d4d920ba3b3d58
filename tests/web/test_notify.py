"""Notices between processes (web.notify): after the commit only, on real SQLite and on real
PostgreSQL, where they reach another process's listener, survive a lost connection, and wake a
long-poll for a verdict that another process wrote."""

from __future__ import annotations

import shutil
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from sqlalchemy import Engine, text
from sqlalchemy.orm import Session, sessionmaker

from tests.web.factories import (
    PKG_204,
    bearer,
    make_client,
    make_settings,
    read_204,
    register,
    result_of,
    submit,
)
from web.db import make_engine, make_sessionmaker, transaction
from web.judging import queue
from web.notify import (
    ANYTHING,
    APPLICATION_NAME,
    LocalNotices,
    PostgresNotices,
    Topic,
    make_notices,
    postgres_conninfo,
)
from web.platform import Platform, build_platform

HEARD_WITHIN_S = 5.0


class Heard:
    """What a handler was given, and a way to wait for it."""

    def __init__(self) -> None:
        self.payloads: list[str] = []
        self._changed = threading.Condition()

    def __call__(self, payload: str) -> None:
        with self._changed:
            self.payloads.append(payload)
            self._changed.notify_all()

    def wait_for(self, payload: str, timeout_s: float = HEARD_WITHIN_S) -> bool:
        with self._changed:
            return self._changed.wait_for(lambda: payload in self.payloads, timeout_s)


def publish(factory: sessionmaker[Session], notices: LocalNotices, payload: str, commit: bool = True) -> None:
    with factory() as session, session.begin():
        notices.publish(session, Topic.SUBMISSION, payload)
        if not commit:
            session.rollback()


@pytest.fixture
def pg_engine(postgres_url: str) -> Iterator[Engine]:
    engine = make_engine(postgres_url)
    yield engine
    engine.dispose()


@contextmanager
def listening(engine: Engine) -> Iterator[PostgresNotices]:
    """A process's notices, listening, until the block ends."""
    notices = PostgresNotices(postgres_conninfo(engine))
    notices.attach(make_sessionmaker(engine))
    notices.start()
    assert notices.wait_listening(10), "the listening connection did not come up"
    try:
        yield notices
    finally:
        notices.close()


def test_local_notices_come_after_the_commit_and_never_for_a_rollback(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'n.db'}")
    factory = make_sessionmaker(engine)
    notices = make_notices(engine)
    assert isinstance(notices, LocalNotices) and not notices.shared
    notices.attach(factory)
    heard = Heard()
    notices.subscribe(Topic.SUBMISSION, heard)
    with transaction(factory) as session:
        notices.publish(session, Topic.SUBMISSION, "1")
        assert heard.payloads == []  # not before the commit: a reader would find nothing new
    assert heard.payloads == ["1"]
    publish(factory, notices, "2", commit=False)
    with transaction(factory) as session:
        notices.publish(session, Topic.SUBMISSION, "3", here=False)  # for other processes only
    assert heard.payloads == ["1"]
    engine.dispose()


def test_a_notice_reaches_another_process_once_and_only_when_committed(pg_engine: Engine) -> None:
    sender = PostgresNotices(postgres_conninfo(pg_engine))
    factory = make_sessionmaker(pg_engine)
    sender.attach(factory)
    own = Heard()
    sender.subscribe(Topic.SUBMISSION, own)
    sender.start()
    assert sender.wait_listening(10)
    with listening(pg_engine) as other:
        heard = Heard()
        other.subscribe(Topic.SUBMISSION, heard)
        assert other.shared
        publish(factory, sender, "41", commit=False)
        publish(factory, sender, "42")
        assert heard.wait_for("42")
        assert heard.payloads == ["42"]  # the rolled-back notice, sent first, never came
        time.sleep(0.3)  # the sender's own listener heard it too, and skipped it
        assert own.payloads == ["42"]
    sender.close()


def test_the_listener_reconnects_and_says_anything_may_have_changed(pg_engine: Engine) -> None:
    with listening(pg_engine) as notices:
        heard = Heard()
        notices.subscribe(Topic.QUEUED, heard)
        with pg_engine.connect() as conn:
            killed = conn.execute(
                # This test's database only: another test's listener, on the same server in
                # the other test process, is not this one's to kill.
                text(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                    " WHERE application_name = :a AND datname = current_database()"
                ),
                {"a": APPLICATION_NAME},
            ).all()
        assert killed == [(True,)]
        assert heard.wait_for(ANYTHING, 15), "no resync after the connection came back"
        factory = make_sessionmaker(pg_engine)
        sender = PostgresNotices(postgres_conninfo(pg_engine))
        with transaction(factory) as session:
            sender.publish(session, Topic.QUEUED, "7")
        assert heard.wait_for("7")


def test_a_long_poll_wakes_for_a_claim_and_a_verdict_written_by_another_process(
    tmp_path: Path, postgres_url: str
) -> None:
    # The web process judges nothing; "another process" (its own engine and notices) claims the
    # submission and writes the verdict. With notices up, a long-poll re-reads the database only
    # every 5 s, so an answer within 2 s came from a notice.
    settings = make_settings(tmp_path, postgres_url, workers=0)
    with make_client(settings) as client:
        platform: Platform = client.app.state.platform  # type: ignore[attr-defined]
        assert isinstance(platform.notices, PostgresNotices) and platform.notices.wait_listening(10)
        _, token = register(client)
        sub_id = submit(client, token, read_204("reference.py"))

        engine = make_engine(postgres_url)
        factory = make_sessionmaker(engine)
        worker_notices = make_notices(engine)
        answers: list[tuple[str, float]] = []

        def long_poll() -> None:
            res = client.get(f"/api/submissions/{sub_id}?wait=20", headers=bearer(token))
            answers.append((res.json()["status"], time.monotonic()))

        for step in ("claim", "complete"):
            poll = threading.Thread(target=long_poll)
            poll.start()
            time.sleep(0.5)  # the long-poll is waiting now
            written = time.monotonic()
            if step == "claim":
                claim = queue.claim(factory, "elsewhere/0", 30, 3, worker_notices)
                assert claim is not None and claim.submission_id == sub_id
            else:
                assert queue.complete(factory, claim, result_of(100), None, "elsewhere/0", worker_notices)
            poll.join(10)
            status, answered = answers[-1]
            assert status == ("running" if step == "claim" else "done")
            assert answered - written < 2.0, f"{step}: answered {answered - written:.2f} s later"
        engine.dispose()


def test_a_problem_sync_in_one_process_reloads_the_problems_of_another(
    tmp_path: Path, postgres_url: str
) -> None:
    problems = tmp_path / "problems"
    shutil.copytree(PKG_204, problems / PKG_204.name)
    settings = make_settings(tmp_path, postgres_url, workers=0, problems_dir=problems)
    here, there = build_platform(settings), build_platform(settings)
    try:
        there.notices.start()
        assert isinstance(there.notices, PostgresNotices) and there.notices.wait_listening(10)
        before = there.problems["204"].content_hash
        statement = problems / PKG_204.name / "statement.en.md"
        statement.write_text(statement.read_text() + "\nOne more line.\n")
        assert here.reload_problems() == ["204"]
        deadline = time.monotonic() + HEARD_WITHIN_S
        while there.problems["204"].content_hash == before and time.monotonic() < deadline:
            time.sleep(0.02)
        assert there.problems["204"].content_hash == here.problems["204"].content_hash != before
    finally:
        for platform in (here, there):
            platform.notices.close()
            platform.engine.dispose()
