"""What the problem page keeps (web.pages.sheets) never shows one reader's page to another, nor
one language's to a reader of the other, and a new package version or a changed learner state
changes the answer; on a real database (SQLite, and PostgreSQL when JUDGE_TEST_POSTGRES_URL is
set)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from tests.factories import make_package
from tests.web.factories import (
    PASSWORD,
    bearer,
    make_admin,
    make_client,
    make_settings,
    platform_of,
    register,
)
from web.auth.models import User
from web.language import LANGUAGE_COOKIE
from web.problems.sync import load_packages, replace_problems, sync_problems
from web.scores.models import Score

LOGIN_NEEDED = 'data-testid="login-needed"'


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest) -> str | None:
    return None if request.param == "sqlite" else str(request.getfixturevalue("postgres_url"))


@pytest.fixture
def client(database_url: str | None, tmp_path: Path) -> Iterator[TestClient]:
    """An app on the shipped problems that judges nothing."""
    with make_client(make_settings(tmp_path, database_url=database_url, workers=0)) as c:
        yield c


def session_of(client: TestClient, name: str) -> dict[str, str]:
    """The Cookie header of a fresh browser session of `name` (the client keeps no cookies)."""
    res = client.post("/api/auth/login", json={"username": name, "password": PASSWORD})
    assert res.status_code == 200, res.text
    cookie = res.cookies["judge_session"]
    client.cookies.clear()
    return {"Cookie": f"judge_session={cookie}"}


def page(client: TestClient, path: str, headers: dict[str, str] | None = None, lang: str = "zh") -> str:
    cookie = "; ".join(filter(None, [(headers or {}).get("Cookie"), f"{LANGUAGE_COOKIE}={lang}"]))
    res = client.get(path, headers={"Cookie": cookie})
    assert res.status_code == 200, res.text
    assert res.headers["cache-control"] == "no-store"  # the security headers stay
    return res.text


def csrf_of(html: str) -> str:
    found = re.search(r'<meta name="csrf-token" content="([^"]*)">', html)
    assert found is not None
    return found.group(1)


def page_data(html: str) -> dict[str, Any]:
    found = re.search(r'<script type="application/json" id="page-data">(.*?)</script>', html, re.S)
    assert found is not None
    data: dict[str, Any] = json.loads(found.group(1))
    return data


def test_a_visitor_s_page_is_kept_per_language_and_never_shown_to_a_learner(client: TestClient) -> None:
    kept = platform_of(client).statements.pages
    zh = page(client, "/problems/204")
    assert LOGIN_NEEDED in zh and csrf_of(zh) == "" and page_data(zh)["userId"] is None
    assert page(client, "/problems/204") == zh
    en = page(client, "/problems/204", lang="en")
    assert en != zh and '<html lang="en">' in en and '<html lang="zh-CN">' in zh
    assert page(client, "/problems/204") == zh, "the English page was kept, the Chinese one is asked"
    kept_now = len(kept)
    # A query string's values are the sender's: such a page is rendered, not kept.
    assert "from=elsewhere" in page(client, "/problems/204?from=elsewhere") and len(kept) == kept_now

    alice, bob = register(client)[0], register(client)[0]
    alice_page = page(client, "/problems/204", session_of(client, alice))
    bob_page = page(client, "/problems/204", session_of(client, bob))
    for name, html, other in ((alice, alice_page, bob), (bob, bob_page, alice)):
        assert LOGIN_NEEDED not in html and f">{name}</a>" in html and f">{other}</a>" not in html
        assert csrf_of(html) != "" and page_data(html)["loggedIn"] is True
    assert csrf_of(alice_page) != csrf_of(bob_page)
    assert page_data(alice_page)["userId"] != page_data(bob_page)["userId"]
    # An English learner gets the English sheet with their own name on it.
    alice_en = page(client, "/problems/204", session_of(client, alice), lang="en")
    assert '<html lang="en">' in alice_en and f">{alice}</a>" in alice_en
    # And visitors after them still get the visitor's page.
    assert page(client, "/problems/204") == zh and page(client, "/problems/204", lang="en") == en
    # A session cookie that names no session is a visitor's.
    assert page(client, "/problems/204", {"Cookie": "judge_session=nothing"}) == zh


def test_the_register_link_follows_the_registration_mode(client: TestClient) -> None:
    _name, admin = make_admin(client)
    assert 'href="/register?next=/problems/204"' in page(client, "/problems/204")
    res = client.put("/api/admin/registration", json={"mode": "closed"}, headers=bearer(admin))
    assert res.status_code == 200, res.text
    assert 'href="/register' not in page(client, "/problems/204")
    client.put("/api/admin/registration", json={"mode": "open"}, headers=bearer(admin))
    assert 'href="/register?next=/problems/204"' in page(client, "/problems/204")


def test_a_learner_s_new_state_shows_on_their_next_page(client: TestClient) -> None:
    name, token = register(client)
    listed = client.get("/api/problems", headers=bearer(token)).json()
    problem = next(p for p in listed if p["prerequisites"])  # one with steps to mark solved
    pid, first = problem["id"], problem["prerequisites"][0]
    me = session_of(client, name)
    before = page(client, f"/problems/{pid}", me)
    assert 'data-status="new"' in before and 'data-testid="tab-solutions" data-state="locked"' in before
    assert f'data-prerequisite="{first}" data-state="open"' in before
    with platform_of(client).factory() as db:
        user_id = db.scalar(select(User.id).where(User.username == name))
        assert user_id is not None
        db.add_all(
            Score(user_id=user_id, problem_id=p, best_score=100, max_score=100, solved=True)
            for p in (pid, first)
        )
        db.commit()
    after = page(client, f"/problems/{pid}", me)
    assert 'data-status="solved"' in after and 'data-testid="tab-solutions" data-state="open"' in after
    assert f'data-prerequisite="{first}" data-state="solved"' in after
    # Nobody else's page changed: a visitor's shows no state, another learner's is new.
    visitor = page(client, f"/problems/{pid}")
    assert 'data-status="' not in visitor and f'data-prerequisite="{first}">' in visitor
    other = page(client, f"/problems/{pid}", session_of(client, register(client)[0]))
    assert 'data-status="new"' in other and f'data-prerequisite="{first}" data-state="open"' in other


def test_a_new_package_version_changes_the_page_even_unannounced(
    database_url: str | None, tmp_path: Path
) -> None:
    """A sync by another program that this process never heard of (no notice, nothing forgotten):
    the page reads the current version's id on every request, and every kept thing is keyed by it."""
    root = tmp_path / "problems"
    root.mkdir()
    package = make_package(root)
    settings = make_settings(tmp_path, database_url=database_url, problems_dir=root, workers=0)
    with make_client(settings) as client:
        name, _token = register(client)
        me = session_of(client, name)
        for html in (page(client, "/problems/901"), page(client, "/problems/901", me)):
            assert "返回" in html and "新的题面" not in html
        (package / "statement.zh.md").write_text("# 加倍\n\n新的题面：返回 $x + x$。\n")
        platform = platform_of(client)
        new = load_packages(root)
        sync_problems(platform.factory, new)
        replace_problems(platform.problems, new)
        for html in (page(client, "/problems/901"), page(client, "/problems/901", me)):
            assert "新的题面" in html
            assert page_data(html)["problem"]["version"] == new["901"].content_hash
