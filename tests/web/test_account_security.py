"""The attacks of the security issue on accounts and tokens, each refused:

- a scratch run sent to POST /api/submissions (scratch runs go through POST /api/scratch only);
- accounts named admin or root, passwords like aaaaaaaa or eight spaces (accounts made before
  the rules keep working, and `judge admin create` may still name an admin "admin");
- a token that mints tokens without the password, tokens that never expire, tokens and sessions
  that survive a log-out everywhere, a token that does more than its scope;
- migration 0009 gives the tokens of an old database an expiry and the narrow scope.
"""

from __future__ import annotations

import argparse
import io
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, cast

import pytest
from alembic import command
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import column, func, insert, select, table, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from tests.web.factories import (
    PASSWORD,
    bearer,
    error_of,
    make_client,
    make_settings,
    platform_of,
    register,
    unique_name,
)
from tests.web.test_access_control import app_routes
from web.auth import rules
from web.auth.models import ApiToken, LoginSession, User
from web.auth.scopes import SUBMIT_ROUTES
from web.auth.secrets import hash_password
from web.db import UTCDateTime, make_engine, utcnow
from web.deps import CSRF_HEADER, SESSION_COOKIE
from web.migrate import alembic_config, upgrade
from web.submissions.models import Submission

CJK = re.compile(r"[\u3400-\u9fff]")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    """An app that judges nothing (workers=0): a queued submission is all these tests need."""
    with make_client(make_settings(tmp_path_factory.mktemp("security"), workers=0)) as client:
        yield client


def db(client: TestClient) -> sessionmaker[Session]:
    return platform_of(client).factory


def both_languages(send: Any, status: int, code: str) -> dict[str, str]:
    """The refusal `send(headers)` gets, in Chinese (the default) and in English: one language each."""
    zh = error_of(send({}), status, code)
    en = error_of(send({"Accept-Language": "en"}), status, code)
    assert CJK.search(zh), zh
    assert not CJK.search(en) and re.search(r"[A-Za-z]{3}", en), en
    return {"zh": zh, "en": en}


def browser_session(site: TestClient, username: str, password: str = PASSWORD) -> tuple[TestClient, str]:
    """A browser of its own, logged in as `username`: the client and its CSRF token."""
    browser = TestClient(site.app, follow_redirects=False)
    res = browser.post("/api/auth/login", json={"username": username, "password": password})
    assert res.status_code == 200, res.text
    return browser, str(res.json()["csrf_token"])


def token_for(site: TestClient, username: str, scope: str | None = None) -> dict[str, Any]:
    body = {"username": username, "password": PASSWORD, **({"scope": scope} if scope else {})}
    res = site.post("/api/auth/token", json=body)
    assert res.status_code == 201, res.text
    made: dict[str, Any] = res.json()
    return made


def count(site: TestClient, model: Any) -> int:
    with db(site)() as session:
        return int(session.scalar(select(func.count()).select_from(model)) or 0)


# ---------------------------------------------------------------- 1. scratch runs have one door


def test_a_scratch_run_is_refused_at_the_submissions_route(site: TestClient) -> None:
    _, token = register(site)
    body = {"problem_id": "204", "code": "x = 1\n", "mode": "scratch"}
    before = count(site, Submission)
    messages = both_languages(
        lambda h: site.post("/api/submissions", json=body, headers={**bearer(token), **h}),
        422,
        "scratch_not_here",
    )
    assert "/api/scratch" in messages["en"] and "/api/scratch" in messages["zh"]
    assert count(site, Submission) == before, "a refused scratch run must leave no row behind"
    # Run and Submit still go there; a scratch run goes to its own route.
    for mode in ("run", "submit"):
        res = site.post("/api/submissions", json={**body, "mode": mode}, headers=bearer(token))
        assert res.status_code == 202, res.text
    scratch = {"problem_id": "204", "code": "x = 1\n", "snippet": "x"}
    assert site.post("/api/scratch", json=scratch, headers=bearer(token)).status_code == 202


# ---------------------------------------------------------------- 2. names and passwords


@pytest.mark.parametrize(
    "name", ["admin", "ADMIN", "Root", "administrator", "system", "sys_admin", "Super-User", "moderator"]
)
def test_reserved_names_cannot_be_registered(site: TestClient, name: str) -> None:
    messages = both_languages(
        lambda h: site.post("/api/auth/register", json={"username": name, "password": PASSWORD}, headers=h),
        422,
        "username_reserved",
    )
    assert name in messages["en"] and name in messages["zh"]
    with db(site)() as session:
        assert session.scalar(select(User).where(func.lower(User.username) == name.lower())) is None


@pytest.mark.parametrize("name", ["admiral", "rooted", "systemic", "admin_ab12cd34", "root2020x"])
def test_names_that_only_contain_a_reserved_word_are_fine(site: TestClient, name: str) -> None:
    res = site.post("/api/auth/register", json={"username": name, "password": PASSWORD})
    assert res.status_code == 201, res.text


def weak_passwords(username: str) -> dict[str, str]:
    return {
        "one character repeated": "aaaaaaaa",
        "spaces only": " " * 8,
        "tabs and spaces": " \t \t \t \t",
        "padded to length": "abc     ",
        "a common one": "password",
        "a common one, capitalised": "Password1",
        "a common Chinese one": "woaini1314",
        "digits in order": "12345678",
        "digits backwards": "87654321",
        "the alphabet": "abcdefgh",
        "a keyboard row": "qwertyui",
        "a short pattern repeated": "abababab",
        "the username": username,
        "the username, other case": username.upper(),
        "the username and a year": username + "2024",
    }


@pytest.mark.parametrize("kind", list(weak_passwords("x")))
def test_trivial_passwords_are_refused(site: TestClient, kind: str) -> None:
    name = unique_name("learner")
    password = weak_passwords(name)[kind]
    both_languages(
        lambda h: site.post("/api/auth/register", json={"username": name, "password": password}, headers=h),
        422,
        "weak_password",
    )
    with db(site)() as session:
        assert session.scalar(select(User).where(User.username == name)) is None


@pytest.mark.parametrize(
    "password",
    [PASSWORD, "Tr0ub4dor&3", "我的密码是一句话", "zq8!kd02", "1234567a", "aaaaaaab", "qwertyuiop12x"],
)
def test_ordinary_passwords_pass_the_rules(password: str) -> None:
    assert rules.weak_password(password, "learner_1") is None


def test_the_register_form_says_why_a_password_is_refused(site: TestClient) -> None:
    browser = TestClient(site.app, follow_redirects=False)
    page = browser.get("/register")
    token = re.search(r'name="form_token" value="([^"]+)"', page.text)
    assert token is not None
    for username, password, words in [
        ("Admin", PASSWORD, "保留"),
        (unique_name("learner"), "aaaaaaaa", "重复"),
    ]:
        form = {"username": username, "password": password, "password_again": password}
        res = browser.post("/register", data={**form, "form_token": token[1]})
        assert res.status_code == 422, res.text[:300]
        assert words in res.text and SESSION_COOKIE not in browser.cookies


def test_accounts_made_before_the_rules_keep_working(site: TestClient) -> None:
    """An old account named superuser with the password aaaaaaaa logs in and gets tokens as before."""
    with db(site)() as session, session.begin():
        session.add(User(username="superuser", password_hash=hash_password("aaaaaaaa")))
    right = {"username": "superuser", "password": "aaaaaaaa"}
    assert site.post("/api/auth/login", json=right).status_code == 200
    assert site.post("/api/auth/token", json=right).status_code == 201


def test_judge_admin_create_may_name_an_admin_admin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The operator's command is not the public registration: it may take a reserved name."""
    from web.cli import _admin_create

    settings = make_settings(tmp_path)
    monkeypatch.setattr("sys.stdin", io.StringIO("a strong password\n"))
    args = argparse.Namespace(username="admin", password_stdin=True, promote=False, role="admin")
    assert _admin_create(args, settings) == 0
    with make_client(settings) as client:
        res = client.post("/api/auth/token", json={"username": "admin", "password": "a strong password"})
        assert res.status_code == 201, res.text


# ---------------------------------------------------------------- 3. tokens


def test_a_token_cannot_mint_a_token(site: TestClient) -> None:
    name, _ = register(site)
    # A submit token is refused by its scope already; a full one because it is a token.
    for scope, code in (("submit", "token_scope"), ("full", "password_required")):
        token = token_for(site, name, scope)["token"]
        before = count(site, ApiToken)
        both_languages(
            lambda h, t=token: site.post("/api/me/tokens", json={"name": "more"}, headers={**bearer(t), **h}),
            403,
            code,
        )
        assert count(site, ApiToken) == before
    full = token_for(site, name, "full")["token"]
    refused = site.post(
        "/api/me/tokens", json={"name": "more"}, headers={**bearer(full), "Accept-Language": "en"}
    )
    assert "/api/auth/token" in refused.json()["error"]["message"]
    # The two ways that need what only the owner has: the password, or a browser session.
    assert token_for(site, name)["scope"] == "submit"
    browser, csrf = browser_session(site, name)
    made = browser.post("/api/me/tokens", json={"name": "laptop"}, headers={CSRF_HEADER: csrf})
    assert made.status_code == 201, made.text
    assert made.json()["scope"] == "submit"
    full = browser.post("/api/me/tokens", json={"name": "ci", "scope": "full"}, headers={CSRF_HEADER: csrf})
    assert full.status_code == 201 and full.json()["scope"] == "full"


def test_a_token_expires(tmp_path: Path) -> None:
    with make_client(make_settings(tmp_path, workers=0, token_days=3)) as client:
        name, _ = register(client)
        made = token_for(client, name)
        expires = datetime.fromisoformat(made["expires_at"])
        assert abs(expires - (utcnow() + timedelta(days=3))) < timedelta(minutes=1)
        headers = bearer(made["token"])
        assert client.get("/api/me", headers=headers).status_code == 200
        listed = [t for t in client.get("/api/me/tokens", headers=bearer(register_full(client, name))).json()]
        assert {t["id"]: t["expires_at"] for t in listed}[made["id"]] == made["expires_at"]
        with db(client)() as session, session.begin():
            session.execute(
                update(ApiToken)
                .where(ApiToken.id == made["id"])
                .values(expires_at=utcnow() - timedelta(seconds=1))
            )
        messages = both_languages(
            lambda h: client.get("/api/me", headers={**headers, **h}), 401, "token_expired"
        )
        assert "/api/auth/token" in messages["en"]
        # Expired tokens are no longer listed.
        listed = client.get("/api/me/tokens", headers=bearer(register_full(client, name))).json()
        assert made["id"] not in [t["id"] for t in listed]


def register_full(client: TestClient, name: str) -> str:
    token: str = token_for(client, name, "full")["token"]
    return token


def test_a_submit_token_does_the_kits_work_and_nothing_else(site: TestClient) -> None:
    name, _ = register(site)
    with db(site)() as session, session.begin():  # even an admin's submit token is no admin
        user = session.scalar(select(User).where(User.username == name))
        assert user is not None
        user.role = "admin"
    made = token_for(site, name)
    assert made["scope"] == "submit"
    headers = bearer(made["token"])
    # What the practice kit and a script do: read problems, submit, follow, read scores.
    sub = site.post("/api/submissions", json={"problem_id": "204", "code": "x = 1\n"}, headers=headers)
    assert sub.status_code == 202, sub.text
    for path in (
        "/api/me",
        "/api/problems",
        "/api/problems/204",
        "/api/course",
        f"/api/submissions/{sub.json()['id']}",
        "/api/submissions?problem_id=204",
        "/api/me/scores",
        "/api/problems/204/draft",
        "/api/leaderboard",
    ):
        assert site.get(path, headers=headers).status_code == 200, path
    assert site.put("/api/problems/204/draft", json={"code": "y = 2\n"}, headers=headers).status_code == 200
    # What manages the account, or acts as an admin: refused, with one clear code.
    refused = [
        ("GET", "/api/me/tokens", None),
        ("DELETE", f"/api/me/tokens/{made['id']}", None),
        ("PATCH", "/api/me", {"language": "en"}),
        ("POST", "/api/auth/logout?everywhere=true", None),
        ("GET", "/api/admin/users", None),
        ("POST", "/api/admin/problems/sync", None),
        ("GET", "/settings", None),
        ("GET", "/admin", None),
    ]
    for method, path, body in refused:
        res = site.request(method, path, json=body, headers=headers)
        assert res.status_code == 403, f"{method} {path}: {res.status_code} {res.text[:200]}"
        if not path.startswith("/api/"):
            continue  # a page answers with a page
        assert res.json()["error"]["code"] == "token_scope", f"{method} {path}: {res.text[:200]}"
    both_languages(lambda h: site.get("/api/me/tokens", headers={**headers, **h}), 403, "token_scope")
    assert site.get("/api/me", headers=headers).json()["language"] == "zh"
    # A full token of the same admin does admin work.
    full = bearer(token_for(site, name, "full")["token"])
    assert site.get("/api/admin/users", headers=full).status_code == 200
    assert made["id"] in [t["id"] for t in site.get("/api/me/tokens", headers=full).json()]


def test_every_route_a_submit_token_may_call_is_served(site: TestClient) -> None:
    """The kit's list names routes the app serves (a renamed route would fall out of it silently),
    and a submit token meets no refusal of its scope on any of them."""
    served = set(app_routes(cast(FastAPI, site.app)))
    assert served >= SUBMIT_ROUTES, sorted(SUBMIT_ROUTES - served)
    assert all(path.startswith("/api/") for _method, path in SUBMIT_ROUTES)


def test_the_token_list_says_scope_and_expiry(site: TestClient) -> None:
    name, _ = register(site)
    made = token_for(site, name)
    listed = site.get("/api/me/tokens", headers=bearer(register_full(site, name))).json()
    row = next(t for t in listed if t["id"] == made["id"])
    assert set(row) == {"id", "name", "prefix", "scope", "created_at", "expires_at", "last_used_at"}
    assert (row["scope"], row["expires_at"]) == ("submit", made["expires_at"])


def test_an_unknown_scope_is_refused(site: TestClient) -> None:
    name, _ = register(site)
    body = {"username": name, "password": PASSWORD, "scope": "admin"}
    error_of(site.post("/api/auth/token", json=body), 422, "invalid_request")


def test_log_out_everywhere_ends_every_session_and_token(site: TestClient) -> None:
    name, _ = register(site)
    other_name, other_token = register(site)
    laptop, csrf = browser_session(site, name)
    phone, _ = browser_session(site, name)
    tokens = [token_for(site, name, scope)["token"] for scope in ("submit", "full")]
    stranger, _ = browser_session(site, other_name)
    # A plain log-out ends this session only.
    third, third_csrf = browser_session(site, name)
    assert third.post("/api/auth/logout", headers={CSRF_HEADER: third_csrf}).status_code == 204
    assert third.get("/api/me").status_code == 401 and phone.get("/api/me").status_code == 200

    res = laptop.post("/api/auth/logout?everywhere=true", headers={CSRF_HEADER: csrf})
    assert res.status_code == 204, res.text
    for browser in (laptop, phone):
        error_of(browser.get("/api/me"), 401, "login_required")
    for token in tokens:
        error_of(site.get("/api/me", headers=bearer(token)), 401, "bad_token")
    with db(site)() as session:
        user_id = session.scalar(select(User.id).where(User.username == name))
        assert session.scalar(select(func.count()).where(LoginSession.user_id == user_id)) == 0
    # Another account is untouched, and the owner logs in again as before.
    assert stranger.get("/api/me").status_code == 200
    assert site.get("/api/me", headers=bearer(other_token)).status_code == 200
    browser_session(site, name)


def test_a_full_token_logs_out_everywhere_itself_included(site: TestClient) -> None:
    name, _ = register(site)
    browser, _ = browser_session(site, name)
    full = bearer(token_for(site, name, "full")["token"])
    assert site.post("/api/auth/logout?everywhere=1", headers=full).status_code == 204
    error_of(site.get("/api/me", headers=full), 401, "bad_token")
    assert browser.get("/api/me").status_code == 401


def test_the_settings_page_logs_out_everywhere(site: TestClient) -> None:
    name, _ = register(site)
    browser, _ = browser_session(site, name)
    other, _ = browser_session(site, name)
    token = token_for(site, name)["token"]
    page = browser.get("/settings")
    assert page.status_code == 200 and 'name="everywhere"' in page.text
    csrf = re.search(r'<meta name="csrf-token" content="([^"]+)"', page.text)
    assert csrf is not None
    res = browser.post("/logout", data={"everywhere": "1", "csrf_token": csrf[1]})
    assert res.status_code == 303
    assert SESSION_COOKIE not in browser.cookies
    assert other.get("/api/me").status_code == 401
    assert site.get("/api/me", headers=bearer(token)).status_code == 401


# ---------------------------------------------------------------- 4. migration 0009


OLD_TOKENS = table(
    "api_tokens",
    *(column(name) for name in ("token_hash", "prefix", "name", "user_id")),
    column("created_at", UTCDateTime()),
)


@pytest.mark.parametrize("dialect", ["sqlite", "postgresql"])
def test_migration_0009_gives_old_tokens_an_expiry_and_the_narrow_scope(
    dialect: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    url = (
        f"sqlite:///{tmp_path / 'old.db'}" if dialect == "sqlite" else request.getfixturevalue("postgres_url")
    )
    engine = make_engine(url)
    try:
        cli = alembic_config()  # outside a transaction, so that 0004 turns foreign keys off
        cli.set_main_option("sqlalchemy.url", engine.url.render_as_string(hide_password=False))
        command.upgrade(cli, "0008")
        created = datetime(2026, 1, 1, tzinfo=UTC)
        with engine.begin() as conn:
            user_id = conn.execute(
                insert(User.__table__).returning(User.__table__.c.id),
                {"username": "old", "password_hash": "x", "role": "learner", "language": "zh"}
                | {"created_at": created},
            ).scalar_one()
            conn.execute(  # the table as 0008 left it: no scope, no expiry
                insert(OLD_TOKENS),
                {"token_hash": "h" * 64, "prefix": "jdg_old", "name": "kit", "user_id": user_id}
                | {"created_at": created},
            )
        upgrade(engine)
        token = ApiToken.__table__.c
        with engine.connect() as conn:
            scope, expires = conn.execute(select(token.scope, token.expires_at)).one()
        assert scope == "submit"
        # A month from the upgrade, not from its making: an old kit keeps working for that long.
        assert abs(expires - (utcnow() + timedelta(days=30))) < timedelta(minutes=5)
        with pytest.raises(IntegrityError), engine.begin() as conn:
            conn.execute(update(ApiToken.__table__).values(scope="root"))
        command.downgrade(cli, "0008")
        command.upgrade(cli, "head")
        with engine.connect() as conn:
            assert conn.execute(select(func.count()).select_from(ApiToken.__table__)).scalar_one() == 1
    finally:
        engine.dispose()
