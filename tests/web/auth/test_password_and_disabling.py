"""Changing one's password and an admin disabling an account, on SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from alembic import command
from fastapi.testclient import TestClient
from sqlalchemy import inspect, select, text

from tests.web.factories import (
    PASSWORD,
    bearer,
    error_of,
    make_admin,
    make_client,
    make_settings,
    platform_of,
    register,
)
from web.auth.models import User
from web.db import make_engine
from web.deps import CSRF_HEADER, SESSION_COOKIE
from web.migrate import alembic_config

NEW_PASSWORD = "a new Pass phrase 9"


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str | None:
    if request.param == "sqlite":
        return None  # make_settings' own SQLite file
    url: str = request.getfixturevalue("postgres_url")
    return url


@pytest.fixture
def client(tmp_path: Path, database_url: str | None) -> Iterator[TestClient]:
    settings = make_settings(tmp_path, database_url, workers=0)
    with make_client(settings) as c:
        yield c


def log_in(client: TestClient, username: str, password: str = PASSWORD) -> tuple[str, str]:
    """A new browser session: (its cookie, its CSRF token). The client's jar is left empty, so
    each request says which session it comes from."""
    client.cookies.clear()
    res = client.post("/api/auth/login", json={"username": username, "password": password})
    assert res.status_code == 200, res.text
    cookie = res.cookies[SESSION_COOKIE]
    client.cookies.clear()
    return cookie, res.json()["csrf_token"]


def as_session(client: TestClient, method: str, path: str, session: tuple[str, str], **kw: Any) -> Any:
    client.cookies.clear()
    client.cookies.set(SESSION_COOKIE, session[0])
    try:
        return client.request(method, path, headers={CSRF_HEADER: session[1]}, **kw)
    finally:
        client.cookies.clear()


def change(old: str = PASSWORD, new: str = NEW_PASSWORD, end_tokens: bool = False) -> dict[str, Any]:
    return {"old_password": old, "new_password": new, "end_tokens": end_tokens}


def test_changing_the_password_ends_the_other_sessions_only(client: TestClient) -> None:
    name, token = register(client)
    other, this = log_in(client, name), log_in(client, name)
    res = as_session(client, "POST", "/api/me/password", this, json=change())
    assert res.status_code == 204, res.text
    assert as_session(client, "GET", "/api/me", other).status_code == 401
    assert as_session(client, "GET", "/api/me", this).status_code == 200
    assert client.get("/api/me", headers=bearer(token)).status_code == 200  # tokens kept unless asked
    old = client.post("/api/auth/login", json={"username": name, "password": PASSWORD})
    error_of(old, 401, "bad_credentials")
    log_in(client, name, NEW_PASSWORD)


def test_end_tokens_revokes_every_token(client: TestClient) -> None:
    name, token = register(client)
    this = log_in(client, name)
    res = as_session(client, "POST", "/api/me/password", this, json=change(end_tokens=True))
    assert res.status_code == 204, res.text
    error_of(client.get("/api/me", headers=bearer(token)), 401, "bad_token")
    assert as_session(client, "GET", "/api/me", this).status_code == 200


def test_a_token_may_change_the_password_with_the_old_one(client: TestClient) -> None:
    name, token = register(client)
    session = log_in(client, name)
    res = client.post("/api/me/password", headers=bearer(token), json=change())
    assert res.status_code == 204, res.text
    assert as_session(client, "GET", "/api/me", session).status_code == 401  # every session ends


def test_a_wrong_old_password_or_a_weak_new_one_changes_nothing(client: TestClient) -> None:
    name, token = register(client)
    wrong = client.post("/api/me/password", headers=bearer(token), json=change(old="not my password"))
    assert "当前密码不正确" in error_of(wrong, 403, "wrong_password")  # Chinese first
    weak = client.post("/api/me/password", headers=bearer(token), json=change(new="12345678"))
    error_of(weak, 422, "weak_password")
    log_in(client, name)  # the old password still works


def test_wrong_old_passwords_are_rate_limited_like_log_ins(tmp_path: Path, database_url: str | None) -> None:
    settings = make_settings(tmp_path, database_url, workers=0, login_failures_per_user=2)
    with make_client(settings) as client:
        _name, token = register(client)
        for _ in range(2):
            res = client.post("/api/me/password", headers=bearer(token), json=change(old="guess"))
            error_of(res, 403, "wrong_password")
        res = client.post("/api/me/password", headers=bearer(token), json=change())
        error_of(res, 429, "rate_limited")  # even the right one waits, as a log-in would


def user_id(client: TestClient, name: str) -> int:
    with platform_of(client).factory() as db:
        found = db.scalar(select(User.id).where(User.username == name))
    assert found is not None
    return found


def test_a_disabled_account_is_refused_everywhere_until_enabled(client: TestClient) -> None:
    _admin, admin_token = make_admin(client)
    name, token = register(client)
    session = log_in(client, name)
    uid = user_id(client, name)
    res = client.post(f"/api/admin/users/{uid}/disable", headers=bearer(admin_token))
    assert res.status_code == 200 and res.json()["disabled"] is True, res.text
    error_of(client.get("/api/me", headers=bearer(token)), 401, "bad_token")  # revoked with it
    assert as_session(client, "GET", "/api/me", session).status_code == 401
    login = client.post("/api/auth/login", json={"username": name, "password": PASSWORD})
    assert "已被停用" in error_of(login, 403, "account_disabled")
    login = client.post("/api/auth/login?lang=en", json={"username": name, "password": PASSWORD})
    assert "This account is disabled" in error_of(login, 403, "account_disabled")
    listed = client.get("/api/admin/users", headers=bearer(admin_token)).json()
    assert [u["disabled"] for u in listed if u["id"] == uid] == [True]

    res = client.post(f"/api/admin/users/{uid}/enable", headers=bearer(admin_token))
    assert res.status_code == 200 and res.json()["disabled"] is False, res.text
    assert as_session(client, "GET", "/api/me", session).status_code == 401  # old sessions stay ended
    fresh = log_in(client, name)
    assert as_session(client, "GET", "/api/me", fresh).status_code == 200


def test_a_token_made_before_the_disabling_commits_is_still_refused(client: TestClient) -> None:
    """The flag alone refuses: deps checks it on every request, not only the deleted rows."""
    name, token = register(client)
    with platform_of(client).factory() as db, db.begin():
        user = db.scalar(select(User).where(User.username == name))
        assert user is not None
        user.disabled = True  # as if a token were issued between the disabling and its commit
    error_of(client.get("/api/me", headers=bearer(token)), 403, "account_disabled")


def test_an_admin_cannot_disable_themself(client: TestClient) -> None:
    admin, admin_token = make_admin(client)
    res = client.post(f"/api/admin/users/{user_id(client, admin)}/disable", headers=bearer(admin_token))
    error_of(res, 409, "cannot_disable_self")
    error_of(client.post("/api/admin/users/999999/disable", headers=bearer(admin_token)), 404, "not_found")


def test_migration_0014_upgrades_and_downgrades(tmp_path: Path, database_url: str | None) -> None:
    url = database_url or f"sqlite:///{tmp_path / 'm.db'}"
    config = alembic_config()
    config.set_main_option("sqlalchemy.url", url)
    command.upgrade(config, "0013")
    engine = make_engine(url)
    try:
        with engine.begin() as conn:
            conn.execute(
                text(
                    "INSERT INTO users (username, password_hash, role, language, created_at)"
                    " VALUES ('old_one', 'x', 'learner', 'zh', CURRENT_TIMESTAMP)"
                )
            )
        command.upgrade(config, "0014")
        with engine.connect() as conn:
            flag = conn.scalar(text("SELECT disabled FROM users WHERE username = 'old_one'"))
        assert flag is not None and not flag  # SQLite answers 0, PostgreSQL False
        command.downgrade(config, "0013")
        assert "disabled" not in {c["name"] for c in inspect(engine).get_columns("users")}
        with engine.connect() as conn:
            assert conn.scalar(text("SELECT count(*) FROM users")) == 1
    finally:
        engine.dispose()


def test_the_settings_form_changes_the_password(client: TestClient) -> None:
    name, _token = register(client)
    other = log_in(client, name)
    this = log_in(client, name)
    form = {"old_password": PASSWORD, "new_password": NEW_PASSWORD, "new_password_again": "typo"}
    res = as_session(client, "POST", "/settings/password", this, data=form)
    assert res.status_code == 400 and 'data-testid="password-error"' in res.text
    form = {**form, "new_password_again": NEW_PASSWORD, "csrf_token": this[1]}
    res = as_session(client, "POST", "/settings/password", this, data=form, follow_redirects=False)
    assert res.status_code == 303 and res.headers["location"].startswith("/settings?password=changed")
    page = as_session(client, "GET", "/settings?password=changed", this)
    assert 'data-testid="password-changed"' in page.text
    assert as_session(client, "GET", "/api/me", other).status_code == 401
    wrong = {
        "old_password": "nope nope",
        "new_password": "another Pass 7",
        "new_password_again": "another Pass 7",
    }
    res = as_session(client, "POST", "/settings/password", this, data=wrong)
    assert res.status_code == 403 and "当前密码不正确" in res.text  # Chinese first


def test_the_admin_page_shows_the_state_and_the_buttons(client: TestClient) -> None:
    admin, _admin_token = make_admin(client)
    name, _token = register(client)
    with platform_of(client).factory() as db, db.begin():
        user = db.scalar(select(User).where(User.username == name))
        assert user is not None
        user.disabled = True
    page = as_session(client, "GET", "/admin", log_in(client, admin)).text
    assert f'data-action="enable-user" data-user="{user_id(client, name)}"' in page
    assert f'data-action="disable-user" data-user="{user_id(client, admin)}"' not in page  # not themself
