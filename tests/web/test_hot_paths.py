"""What makes the busiest requests cheap keeps them right: kept statements follow a reload, many
logged-in readers at once never stall the server, and an API token's last use is kept to the
minute without a write per request."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select, update

from tests.factories import make_package
from tests.web.factories import (
    PASSWORD,
    bearer,
    error_of,
    make_client,
    make_settings,
    platform_of,
    register,
    submit,
)
from web.auth.models import ApiToken
from web.db import utcnow
from web.statements import Kept, Statements


@pytest.fixture
def own_problems(tmp_path: Path) -> Iterator[tuple[TestClient, Path]]:
    """An app on a problems folder of its own (one small package, 901), and that package."""
    root = tmp_path / "problems"
    root.mkdir()
    package = make_package(root)
    with make_client(make_settings(tmp_path, problems_dir=root, workers=0)) as client:
        yield client, package


def test_statements_are_rendered_once_and_follow_a_reload(own_problems: tuple[TestClient, Path]) -> None:
    client, package = own_problems
    kept = platform_of(client).statements
    assert "返回" in client.get("/problems/901").text
    assert "返回" in client.get("/api/problems/901").json()["statement"]["zh_html"]
    page_renders, api_hits = kept.for_page.cache_info().misses, kept.for_api.cache_info().hits
    client.get("/problems/901")
    client.get("/api/problems/901")
    # The page's statement is part of the version's kept sheet (web.pages.sheets): not even asked again.
    assert kept.for_page.cache_info().misses == page_renders == 1
    assert len(kept.pages) > 0
    assert kept.for_api.cache_info().hits > api_hits

    (package / "statement.zh.md").write_text("# 加倍\n\n新的题面:返回 $x + x$。\n")
    assert platform_of(client).reload_problems() == ["901"]
    assert kept.for_page.cache_info().currsize == 0 and kept.for_api.cache_info().currsize == 0
    assert len(kept.pages) == 0
    assert "新的题面" in client.get("/problems/901").text
    assert "新的题面" in client.get("/api/problems/901").json()["statement"]["zh_html"]


def test_the_same_text_renders_the_same_whoever_asked_first() -> None:
    text = "# T\n\n```python\nx = 1\n```\n\n$a^2$"
    statements = Statements()
    assert statements.for_page(text) is statements.for_page(text)
    # Plain for the API, highlighted for the page.
    assert statements.for_api(text) == statements.for_api(text) != statements.for_page(text)


def test_many_logged_in_readers_at_once_are_all_answered(tmp_path: Path) -> None:
    """More readers at once than the database pool has connections. Looking a session up used to
    wait for a pooled connection on the event loop itself, while the connections only came back
    through that loop: from 16 logged-in readers at once the app stopped answering anyone."""
    with make_client(make_settings(tmp_path, workers=0)) as setup:
        name, token = register(setup)
        setup.post("/api/auth/login", json={"username": name, "password": PASSWORD})
        cookie = {"Cookie": f"judge_session={setup.cookies['judge_session']}"}

        async def read_all() -> list[int]:
            transport = httpx.ASGITransport(app=setup.app)
            async with httpx.AsyncClient(transport=transport, base_url="http://judge.test") as client:

                async def one(i: int) -> int:
                    path, headers = ("/problems/204", cookie) if i % 2 else ("/api/me", bearer(token))
                    return (await client.get(path, headers=headers)).status_code

                return await asyncio.gather(*(one(i) for i in range(READERS)))

        # In a thread of its own, so that a stalled event loop fails the test instead of hanging it.
        answers: list[int] = []
        reader = threading.Thread(target=lambda: answers.extend(asyncio.run(read_all())), daemon=True)
        reader.start()
        reader.join(timeout=120)
        assert not reader.is_alive(), "the app stopped answering"
        assert answers == [200] * READERS


READERS = 160


def test_a_token_s_last_use_is_kept_to_the_minute(tmp_path: Path) -> None:
    with make_client(make_settings(tmp_path, workers=0)) as client:
        _name, token = register(client)
        factory = platform_of(client).factory

        def last_used() -> datetime | None:
            with factory() as db:
                return db.scalar(select(ApiToken.last_used_at))

        assert last_used() is None
        assert client.get("/api/me", headers=bearer(token)).status_code == 200
        first = last_used()
        assert first is not None
        assert client.get("/api/me", headers=bearer(token)).status_code == 200
        assert last_used() == first  # used again within the minute: no write
        with factory() as db, db.begin():
            db.execute(update(ApiToken).values(last_used_at=utcnow() - timedelta(minutes=2)))
        assert client.get("/api/me", headers=bearer(token)).status_code == 200
        again = last_used()
        assert again is not None and again > utcnow() - timedelta(minutes=1)


def test_the_status_api_reads_its_reader_as_the_other_routes_do(tmp_path: Path) -> None:
    """GET /api/submissions/{id} looks its reader up in its own thread (web.deps.read_user), in
    the same transaction as the read: the same answers as UserDep's for every kind of reader."""
    with make_client(make_settings(tmp_path, workers=0)) as client:
        _alice, alice = register(client)
        bob_name, bob = register(client)
        sub_id = submit(client, alice, "def f(x):\n    return x\n")
        path = f"/api/submissions/{sub_id}"
        assert client.get(path, headers=bearer(alice)).json()["id"] == sub_id
        # Nobody: 401 before the id is even checked, as UserDep answered.
        assert error_of(client.get(path), 401, "login_required")
        assert error_of(client.get(f"/api/submissions/{2**40}"), 401, "login_required")
        assert error_of(client.get(path, headers=bearer("not-a-token")), 401, "bad_token")
        # Someone else's submission is not found; so is it for their browser session.
        assert error_of(client.get(path, headers=bearer(bob)), 404, "not_found")
        client.post("/api/auth/login", json={"username": bob_name, "password": PASSWORD})
        assert error_of(client.get(path), 404, "not_found")
        client.cookies.clear()
        # A token's last use is written as on any other route.
        factory = platform_of(client).factory
        with factory() as db, db.begin():
            db.execute(update(ApiToken).values(last_used_at=utcnow() - timedelta(minutes=2)))
        assert client.get(path, headers=bearer(alice)).status_code == 200
        with factory() as db:
            used = db.scalars(select(ApiToken.last_used_at)).all()
        assert any(u is not None and u > utcnow() - timedelta(minutes=1) for u in used)


def test_what_pages_keep_is_bounded_and_never_outlives_a_reload() -> None:
    statements = Statements()
    kept = statements.pages
    since = kept.generation
    kept.put("old", "built from the rows before the reload", since)
    assert kept.get("old") is not None
    statements.forget()  # the problems changed while something was being built from old rows
    assert kept.get("old") is None
    kept.put("late", "built from the rows before the reload", since)
    assert kept.get("late") is None, "put back after the reload emptied it"
    kept.put("new", "built after", kept.generation)
    assert kept.get("new") == "built after"

    small = Kept(2)
    small.put("a", 1)
    small.put("b", 2)
    assert small.get("a") == 1  # used: "b" is now the least recently used
    small.put("c", 3)
    assert (small.get("a"), small.get("b"), small.get("c"), len(small)) == (1, None, 3, 2)
