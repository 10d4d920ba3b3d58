"""How a learner appears on the public leaderboard (issue 31, item 9): under a name they choose
instead of their username, or not at all; nobody can take another's name; the API marks the
reader's own row and never shows a username that a display name stands for."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from tests.web.factories import PASSWORD, bearer, error_of, make_client, make_settings, platform_of, register
from tests.web.pages.test_account_pages import form_token
from web.auth.models import User
from web.db import transaction, utcnow
from web.scores.models import Score


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    with make_client(make_settings(tmp_path, JUDGE_WORKERS=0)) as c:
        yield c


def scored(client: TestClient, username: str, points: int, minutes_ago: int) -> None:
    """A best score on 204, written directly: the board reads scores, not judgements."""
    with transaction(platform_of(client).factory) as db:
        user_id = db.scalar(select(User.id).where(User.username == username))
        assert user_id is not None
        db.add(
            Score(
                user_id=user_id,
                problem_id="204",
                best_score=points,
                max_score=100,
                solved=points == 100,
                improved_at=utcnow() - timedelta(minutes=minutes_ago),
            )
        )


def board(client: TestClient, token: str | None = None) -> list[dict[str, object]]:
    res = client.get("/api/leaderboard", headers=bearer(token) if token else {})
    assert res.status_code == 200, res.text
    rows: list[dict[str, object]] = res.json()
    return rows


def test_a_display_name_stands_for_the_username_and_hiding_leaves_the_board(client: TestClient) -> None:
    ada, ada_token = register(client)
    bob, bob_token = register(client)
    scored(client, ada, 100, 10)
    scored(client, bob, 60, 5)
    assert [(r["name"], r["you"]) for r in board(client, ada_token)] == [(ada, True), (bob, False)]

    res = client.patch("/api/me", json={"display_name": "  Ada L. 阿达  "}, headers=bearer(ada_token))
    assert res.status_code == 200, res.text
    assert res.json()["display_name"] == "Ada L. 阿达" and res.json()["language"] == "zh"
    rows = board(client)
    assert [r["name"] for r in rows] == ["Ada L. 阿达", bob]
    assert ada not in str(rows)  # the username a display name stands for is not shown

    res = client.patch("/api/me", json={"on_leaderboard": False}, headers=bearer(bob_token))
    assert res.status_code == 200 and res.json()["on_leaderboard"] is False
    assert [r["name"] for r in board(client)] == ["Ada L. 阿达"]
    assert bob not in client.get("/leaderboard").text  # the page too

    # "" gives the username back; listing again brings bob back with his rank.
    client.patch("/api/me", json={"display_name": ""}, headers=bearer(ada_token))
    client.patch("/api/me", json={"on_leaderboard": True}, headers=bearer(bob_token))
    assert [(r["rank"], r["name"]) for r in board(client)] == [(1, ada), (2, bob)]


def test_nobody_takes_another_accounts_name(client: TestClient) -> None:
    ada, _ = register(client)
    _, bob_token = register(client)
    for taken in (ada, ada.upper()):
        res = client.patch("/api/me", json={"display_name": taken}, headers=bearer(bob_token))
        error_of(res, 409, "name_taken")
    assert (
        client.patch("/api/me", json={"display_name": "Bobby"}, headers=bearer(bob_token)).status_code == 200
    )
    _, cat_token = register(client)
    error_of(
        client.patch("/api/me", json={"display_name": "bobby"}, headers=bearer(cat_token)), 409, "name_taken"
    )


@pytest.mark.parametrize("name", ["<b>x</b>", "a" * 33, "tab\there", "x\u202eevil"])
def test_a_display_name_is_plain_and_short(client: TestClient, name: str) -> None:
    _, token = register(client)
    assert client.patch("/api/me", json={"display_name": name}, headers=bearer(token)).status_code == 422


def test_the_settings_page_offers_the_choice(client: TestClient) -> None:
    name, token = register(client)
    client.patch("/api/me", json={"display_name": "Shown", "on_leaderboard": False}, headers=bearer(token))
    login = client.get("/login")
    res = client.post(
        "/login", data={"username": name, "password": PASSWORD, "form_token": form_token(login.text)}
    )
    assert res.status_code in (200, 303), res.text
    form = client.get("/settings").text.split('data-testid="board-presence"')[1].split("</form>")[0]
    assert 'value="Shown"' in form and "checked" not in form
