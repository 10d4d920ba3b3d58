"""Rows that only count recent events go once nothing counts them any more, on real SQLite and real
PostgreSQL: failed logins past their window, rate events past their kind's window, expired
sessions. Each goes with the next write to its table, and the rows still counted stay."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select
from sqlalchemy.orm import InstrumentedAttribute, Session, sessionmaker

from tests.web.factories import PASSWORD, make_client, make_settings, register
from web.auth.models import LoginAttempt, LoginSession, RateEvent, RateKind, User
from web.auth.pruning import prune
from web.db import utcnow
from web.platform import Platform
from web.settings import WebSettings

# Well inside or well past a window: the test never depends on how long it runs.
MARGIN = timedelta(seconds=30)


@dataclass
class Site:
    client: TestClient
    settings: WebSettings
    factory: sessionmaker[Session]
    username: str


@pytest.fixture(params=["sqlite", "postgresql"])
def site(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Site]:
    url = None if request.param == "sqlite" else request.getfixturevalue("postgres_url")
    settings = make_settings(tmp_path, database_url=url, workers=0)
    with make_client(settings) as client:
        platform: Platform = client.app.state.platform  # type: ignore[attr-defined]
        username, _ = register(client)
        yield Site(client, settings, platform.factory, username)


def ago(window_s: float, past: bool) -> datetime:
    """A time just past the window (`past`) or still well inside it."""
    window = timedelta(seconds=window_s)
    return utcnow() - (window + MARGIN if past else window - MARGIN)


def add_rows(
    factory: sessionmaker[Session], rows: list[LoginAttempt | RateEvent | LoginSession]
) -> list[int]:
    with factory() as db:
        db.add_all(rows)
        db.commit()
        return [row.id for row in rows]


def ids_of(factory: sessionmaker[Session], table_id: InstrumentedAttribute[int]) -> set[int]:
    with factory() as db:
        return set(db.scalars(select(table_id)))


def test_failed_logins_past_their_window_go_with_the_next_failure(site: Site) -> None:
    window = site.settings.login_window_s
    old = add_rows(
        site.factory, [LoginAttempt(username="x", address="a", at=ago(window, past=True)) for _ in range(5)]
    )
    fresh = add_rows(site.factory, [LoginAttempt(username="x", address="a", at=ago(window, past=False))])
    res = site.client.post("/api/auth/login", json={"username": site.username, "password": "wrong password"})
    assert res.status_code == 401, res.text
    left = ids_of(site.factory, LoginAttempt.id)
    assert not left & set(old)
    assert set(fresh) < left and len(left) == 2  # the fresh one and this failure


def test_rate_events_go_after_their_own_kinds_window(site: Site) -> None:
    register_s, password_s = site.settings.register_window_s, site.settings.password_window_s
    assert password_s + 2 * MARGIN.total_seconds() < register_s  # so one time can be in one, past the other
    between = utcnow() - timedelta(seconds=password_s) - MARGIN  # past the password window only
    old = add_rows(
        site.factory,
        [
            RateEvent(kind=RateKind.REGISTER, address="a", at=ago(register_s, past=True)),
            RateEvent(kind=RateKind.PASSWORD, address="a", at=ago(password_s, past=True)),
            RateEvent(kind=RateKind.PASSWORD, address="b", at=between),
        ],
    )
    kept = add_rows(
        site.factory,
        [
            RateEvent(kind=RateKind.REGISTER, address="a", at=between),  # a registration still counts
            RateEvent(kind=RateKind.PASSWORD, address="a", at=ago(password_s, past=False)),
        ],
    )
    before = ids_of(site.factory, RateEvent.id)
    res = site.client.post("/api/auth/login", json={"username": site.username, "password": PASSWORD})
    assert res.status_code == 200, res.text  # a password check: one more rate event
    left = ids_of(site.factory, RateEvent.id)
    assert not left & set(old)
    assert set(kept) < left
    assert len(left - before) == 1
    # The registration and the log-in of the fixture's account are fresh: still there too.
    assert before - set(old) <= left


def test_expired_sessions_go_when_a_session_starts(site: Site) -> None:
    with site.factory() as db:
        user_id = db.scalar(select(User.id).where(User.username == site.username))
    assert user_id is not None

    def session(expires_at: datetime, n: int) -> LoginSession:
        return LoginSession(token_hash=f"{n:064d}", user_id=user_id, csrf_token="c", expires_at=expires_at)

    expired = add_rows(site.factory, [session(utcnow() - timedelta(days=d), d) for d in (1, 2, 3)])
    live = add_rows(site.factory, [session(utcnow() + timedelta(days=1), 10)])
    res = site.client.post("/api/auth/login", json={"username": site.username, "password": PASSWORD})
    assert res.status_code == 200, res.text
    left = ids_of(site.factory, LoginSession.id)
    assert not left & set(expired)
    assert set(live) < left and len(left) == 2  # the live one and the new one
    assert site.client.get("/api/me").status_code == 200  # the new session works


def test_each_write_prunes_a_bounded_batch(site: Site) -> None:
    window = site.settings.login_window_s
    old = add_rows(
        site.factory, [LoginAttempt(username="x", address="a", at=ago(window, past=True)) for _ in range(7)]
    )
    stale = LoginAttempt.at < utcnow() - timedelta(seconds=window)
    with site.factory() as db:
        assert prune(db, LoginAttempt.id, stale, batch=3) == 3
        db.commit()
    assert ids_of(site.factory, LoginAttempt.id) == set(old[3:])  # the oldest three went first
    with site.factory() as db:
        assert prune(db, LoginAttempt.id, stale, batch=3) == 3
        assert prune(db, LoginAttempt.id, stale, batch=3) == 1
        assert prune(db, LoginAttempt.id, stale, batch=3) == 0
        db.rollback()  # nothing goes until the caller commits
    assert ids_of(site.factory, LoginAttempt.id) == set(old[3:])
