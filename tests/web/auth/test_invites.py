"""Registration by invite code and the registration mode an admin sets on /admin, on SQLite and
PostgreSQL: codes shown once and kept as hashes, counted uses, expiry and revocation, the last use
raced for by several registrations at once, and one effective mode read by the API, the register
page and every page's Register link."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select, update

from tests.web.auth.forms import backend_url, browser, form_token
from tests.web.factories import (
    PASSWORD,
    bearer,
    error_of,
    make_admin,
    make_client,
    make_settings,
    platform_of,
    unique_name,
)
from web.admin.models import SiteOption
from web.auth import registration
from web.auth.models import InviteCode, User
from web.db import utcnow
from web.deps import SESSION_COOKIE

NEEDED_ZH = "在本站注册需要邀请码；请向站点管理员索取。"
BAD_EN = "This invite code does not work: it is unknown, used up, expired or revoked."


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str | None:
    return backend_url(request, request.param, tmp_path)


@pytest.fixture
def client(tmp_path: Path, database_url: str | None) -> Iterator[TestClient]:
    with make_client(make_settings(tmp_path, database_url, workers=0)) as c:
        yield c


def set_mode(client: TestClient, admin: str, mode: str) -> None:
    res = client.put("/api/admin/registration", json={"mode": mode}, headers=bearer(admin))
    assert res.status_code == 200 and res.json() == {"mode": mode}, res.text
    assert client.get("/api/admin/registration", headers=bearer(admin)).json() == {"mode": mode}


def new_invite(client: TestClient, admin: str, **body: Any) -> dict[str, Any]:
    res = client.post("/api/admin/invites", json={"note": "class 3B", **body}, headers=bearer(admin))
    assert res.status_code == 201, res.text
    made: dict[str, Any] = res.json()
    return made


def sign_up(client: TestClient, code: str | None, lang: str = "en") -> Any:
    body: dict[str, Any] = {"username": unique_name("inv"), "password": PASSWORD}
    if code is not None:
        body["invite_code"] = code
    return client.post("/api/auth/register", json=body, headers={"Accept-Language": lang})


def uses_of(client: TestClient, invite_id: int) -> int:
    with platform_of(client).factory() as db:
        return db.scalar(select(InviteCode.uses).where(InviteCode.id == invite_id)) or 0


def test_invite_mode_lets_in_only_those_with_a_working_code(client: TestClient) -> None:
    _, admin = make_admin(client)
    set_mode(client, admin, "invite")
    made = new_invite(client, admin, max_uses=2, expires_in_days=3)
    code = made["code"]
    assert made["uses"] == 0 and made["max_uses"] == 2 and made["note"] == "class 3B"
    assert (
        timedelta(days=2, hours=23)
        < datetime.fromisoformat(made["expires_at"]) - utcnow()
        <= timedelta(days=3)
    )
    # Kept as a hash: the list shows the prefix, never the code.
    listed = client.get("/api/admin/invites", headers=bearer(admin))
    assert listed.status_code == 200 and code not in listed.text
    assert [i["prefix"] for i in listed.json()] == [made["prefix"]] and code.startswith(made["prefix"])
    with platform_of(client).factory() as db:
        assert db.scalar(select(func.count()).where(InviteCode.code_hash == code)) == 0

    assert error_of(sign_up(client, None, "zh"), 403, "invite_required") == NEEDED_ZH
    assert error_of(sign_up(client, "inv-nosuchcode"), 403, "bad_invite") == BAD_EN
    assert sign_up(client, code).status_code == 201
    assert sign_up(client, f"  {code.upper()} ").status_code == 201  # as typed: case and spaces
    assert uses_of(client, made["id"]) == 2
    # Used up: refused, nothing made, no use counted.
    before = _users(client)
    error_of(sign_up(client, code), 403, "bad_invite")
    assert _users(client) == before and uses_of(client, made["id"]) == 2

    # Revoked and expired codes are refused alike.
    revoked = new_invite(client, admin, max_uses=5)
    res = client.post(f"/api/admin/invites/{revoked['id']}/revoke", headers=bearer(admin))
    assert res.status_code == 200 and res.json()["revoked_at"] is not None
    error_of(sign_up(client, revoked["code"]), 403, "bad_invite")
    expired = new_invite(client, admin, max_uses=5)
    with platform_of(client).factory() as db, db.begin():
        db.execute(update(InviteCode).where(InviteCode.id == expired["id"]).values(expires_at=utcnow()))
    error_of(sign_up(client, expired["code"]), 403, "bad_invite")
    assert uses_of(client, revoked["id"]) == uses_of(client, expired["id"]) == 0
    error_of(client.post("/api/admin/invites/999999/revoke", headers=bearer(admin)), 404, "not_found")

    # Another mode ignores the code; a bad body is a 422.
    set_mode(client, admin, "open")
    assert sign_up(client, None).status_code == 201
    bad = client.post("/api/admin/invites", json={"max_uses": 0}, headers=bearer(admin))
    assert bad.status_code == 422


def test_the_register_page_asks_for_the_code(client: TestClient) -> None:
    _, admin = make_admin(client)
    set_mode(client, admin, "invite")
    code = new_invite(client, admin, max_uses=1)["code"]
    reader = browser(client, "zh")
    page = reader.get(f"/register?invite={code}")
    assert page.status_code == 200 and 'name="invite_code"' in page.text and f'value="{code}"' in page.text
    assert "邀请码" in page.text
    assert 'href="/register' in reader.get("/login").text  # invite: the link is offered
    name = unique_name("form")
    form = {
        "username": name,
        "password": PASSWORD,
        "password_again": PASSWORD,
        "form_token": form_token(page.text),
    }
    wrong = reader.post("/register", data={**form, "invite_code": "inv-wrong"})
    assert wrong.status_code == 403 and "此邀请码无效" in wrong.text and 'name="invite_code"' in wrong.text
    empty = reader.post("/register", data=form)
    assert empty.status_code == 403 and NEEDED_ZH in empty.text
    ok = reader.post("/register", data={**form, "invite_code": code})
    assert ok.status_code == 303 and SESSION_COOKIE in reader.cookies


def test_the_admins_choice_wins_over_the_setting(tmp_path: Path, database_url: str | None) -> None:
    with make_client(make_settings(tmp_path, database_url, workers=0, registration="invite")) as client:
        _, admin = make_admin_while(client, "invite")
        assert client.get("/api/admin/registration", headers=bearer(admin)).json() == {"mode": "invite"}
        error_of(sign_up(client, None), 403, "invite_required")
        set_mode(client, admin, "closed")
        error_of(sign_up(client, None), 403, "registration_closed")
        reader = browser(client, "en")
        for path in ("/login", "/problems"):
            assert 'href="/register' not in reader.get(path).text, path
        assert 'data-testid="registration-closed"' in reader.get("/register").text
        set_mode(client, admin, "open")
        assert sign_up(client, None).status_code == 201
        with platform_of(client).factory() as db:
            option = db.get(SiteOption, "registration")
            assert option is not None and option.value == "open" and option.updated_by is not None
    # The choice is kept in the database: a restart (with the setting still "invite") keeps it.
    with make_client(make_settings(tmp_path, database_url, workers=0, registration="invite")) as client:
        assert sign_up(client, None).status_code == 201
        mode = client.put("/api/admin/registration", json={"mode": "sometimes"}, headers=bearer(admin))
        assert mode.status_code == 422


def make_admin_while(client: TestClient, mode: str) -> tuple[str, str]:
    """An admin on a site whose registration is not open: registered while the site option is
    set to open for a moment (directly in the database), then the option is `mode` again."""
    with platform_of(client).factory() as db, db.begin():
        db.merge(SiteOption(name="registration", value="open"))
    made = make_admin(client)
    with platform_of(client).factory() as db, db.begin():
        db.merge(SiteOption(name="registration", value=mode))
    return made


def test_the_last_use_goes_to_one_registration_only(client: TestClient) -> None:
    _, admin = make_admin(client)
    set_mode(client, admin, "invite")
    made = new_invite(client, admin, max_uses=1)
    racers = 6
    start = threading.Barrier(racers)
    statuses: list[int] = []

    def race() -> None:
        start.wait()
        statuses.append(sign_up(client, made["code"]).status_code)

    threads = [threading.Thread(target=race) for _ in range(racers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert sorted(statuses) == [201] + [403] * (racers - 1), statuses
    assert uses_of(client, made["id"]) == 1


def test_the_admin_page_shows_the_mode_and_the_codes(client: TestClient) -> None:
    admin_name, admin = make_admin(client)
    made = new_invite(client, admin, max_uses=4)
    reader = browser(client, "en")
    login = reader.get("/login")
    reader.post(
        "/login", data={"username": admin_name, "password": PASSWORD, "form_token": form_token(login.text)}
    )
    page = reader.get("/admin")
    assert page.status_code == 200
    assert 'name="mode" value="open" checked' in page.text
    assert (
        f'data-invite="{made["id"]}"' in page.text
        and made["prefix"] in page.text
        and made["code"] not in page.text
    )
    assert "0 / 4" in page.text


def _users(client: TestClient) -> int:
    with platform_of(client).factory() as db:
        return db.scalar(select(func.count()).select_from(User)) or 0


def test_the_register_link_reads_the_database_off_the_event_loop_only(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    platform = platform_of(client)
    assert sign_up(client, None).status_code == 201  # the route read the mode: "open"
    with platform.factory() as db, db.begin():  # another process closes registration
        db.merge(SiteOption(name="registration", value="closed"))
    monkeypatch.setattr(registration, "LINK_FRESH_S", 0.0)  # this process's reading is stale at once

    async def on_the_loop() -> bool:
        return registration.registration_offered(platform.factory, platform.settings)

    # An error page rendered on the event loop keeps the last reading rather than wait on the database.
    assert asyncio.run(on_the_loop()) is True
    # Any page rendered in a thread reads it again.
    assert registration.registration_offered(platform.factory, platform.settings) is False
    assert 'href="/register' not in browser(client, "en").get("/login").text
