"""One-time reset links issued by an admin or an instructor, on SQLite and PostgreSQL: the link is
shown once and stored as a keyed hash, works once and until it expires, a new one voids the older
ones, using it ends the account's sessions and tokens and logs the browser in; a dead link of any
kind shows one page; who may issue one; the POST is counted per address like a log-in."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select, update

from tests.web.auth.forms import NEW_PASSWORD, backend_url, browser, form_token, token_of, user_named
from tests.web.factories import (
    PASSWORD,
    bearer,
    error_of,
    make_admin,
    make_class,
    make_client,
    make_instructor,
    make_settings,
    platform_of,
    register,
)
from web.auth.models import PasswordReset
from web.auth.secrets import token_hash
from web.db import utcnow
from web.deps import SESSION_COOKIE

DEAD_EN = "This link no longer works. Ask for a new one."
DEAD_ZH = "此链接已失效。请重新申请一个。"


@pytest.fixture(params=["sqlite", "postgresql"])
def client(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[TestClient]:
    url = backend_url(request, request.param, tmp_path)
    settings = make_settings(tmp_path, url, workers=0, public_url="https://judge.example.org")
    with make_client(settings) as c:
        yield c


def issue(client: TestClient, issuer_token: str, user_id: int) -> str:
    res = client.post(f"/api/users/{user_id}/reset-link", headers=bearer(issuer_token))
    assert res.status_code == 201, res.text
    body = res.json()
    assert set(body) == {"url", "expires_at"}
    url: str = body["url"]
    return url


def set_password(reader: TestClient, token: str, password: str = NEW_PASSWORD) -> Any:
    page = reader.get(f"/reset/{token}")
    assert page.status_code == 200, page.text
    form = {"password": password, "password_again": password, "form_token": form_token(page.text)}
    return reader.post(f"/reset/{token}", data=form)


def test_an_admins_link_sets_the_password_once_and_ends_everything(client: TestClient) -> None:
    _, admin = make_admin(client)
    name, token = register(client)
    learner = user_named(client, name)
    url = issue(client, admin, learner.id)
    assert url.startswith("https://judge.example.org/reset/")  # the public address, not the asked one
    raw = token_of(url)
    with platform_of(client).factory() as db:  # only the keyed hash is kept
        row = db.scalar(select(PasswordReset).where(PasswordReset.user_id == learner.id))
        assert row is not None and row.token_hash == token_hash("k" * 48, raw) and raw not in row.token_hash
        assert row.used_at is None and row.issued_by is not None
        assert timedelta(hours=23) < row.expires_at - utcnow() <= timedelta(hours=24)
    # A session of the learner's from before, which the reset must end.
    before = client.post("/api/auth/login", json={"username": name, "password": PASSWORD})
    old_cookie = before.cookies[SESSION_COOKIE]
    client.cookies.clear()

    reader = browser(client, "en")
    page = reader.get(f"/reset/{raw}")
    assert page.status_code == 200 and name in page.text and "Set a new password" in page.text
    res = set_password(reader, raw)
    # Logged in at once, on the settings page that says what happened.
    assert res.status_code == 303 and res.headers["location"].startswith("/settings?password=reset")
    settings_page = reader.get("/settings?password=reset")
    assert settings_page.status_code == 200 and "Your new password is set" in settings_page.text
    # Every token and every other session is over; the new password logs in, the old does not.
    assert client.get("/api/me", headers=bearer(token)).status_code == 401
    stale = TestClient(client.app)
    stale.cookies.set(SESSION_COOKIE, old_cookie)
    assert stale.get("/api/me").status_code == 401
    old = client.post("/api/auth/login", json={"username": name, "password": PASSWORD})
    error_of(old, 401, "bad_credentials")
    assert (
        client.post("/api/auth/login", json={"username": name, "password": NEW_PASSWORD}).status_code == 200
    )
    # Used: the page and the form say the link is dead, and the password stays.
    again = browser(client, "en").get(f"/reset/{raw}")
    assert again.status_code == 410 and DEAD_EN in again.text and 'action="/reset/' not in again.text
    with platform_of(client).factory() as db:
        used = db.scalar(select(PasswordReset.used_at).where(PasswordReset.user_id == learner.id))
        assert used is not None


def test_unknown_used_expired_and_voided_links_show_one_page(client: TestClient) -> None:
    _, admin = make_admin(client)
    name, _ = register(client)
    learner = user_named(client, name)
    first = token_of(issue(client, admin, learner.id))
    second = token_of(issue(client, admin, learner.id))  # voids the first
    third_user, _ = register(client)
    expired = token_of(issue(client, admin, user_named(client, third_user).id))
    with platform_of(client).factory() as db, db.begin():
        db.execute(
            update(PasswordReset)
            .where(PasswordReset.token_hash == token_hash("k" * 48, expired))
            .values(expires_at=utcnow() - timedelta(seconds=1))
        )
    pages = {}
    for lang, dead in (("zh", DEAD_ZH), ("en", DEAD_EN)):
        for label, token in (("unknown", "no-such-link"), ("voided", first), ("expired", expired)):
            res = browser(client, lang).get(f"/reset/{token}")
            assert res.status_code == 410 and dead in res.text, (lang, label)
            pages[lang, label] = res.text.replace(token, "")
            # Posting to it (a form opened before) gets the same page; the password stays.
            reader = browser(client, lang)
            reader.get("/login")  # the form cookie
            posted = reader.post(
                f"/reset/{token}", data={"password": NEW_PASSWORD, "password_again": NEW_PASSWORD}
            )
            assert posted.status_code == 410 and dead in posted.text
    # Which kind of dead is not told: the pages are the same but for the token in the address.
    assert pages["en", "unknown"] == pages["en", "voided"] == pages["en", "expired"]
    assert client.post("/api/auth/login", json={"username": name, "password": PASSWORD}).status_code == 200
    # The newest link still works.
    assert set_password(browser(client, "zh"), second).status_code == 303


def test_a_weak_or_mistyped_password_keeps_the_link(client: TestClient) -> None:
    _, admin = make_admin(client)
    name, _ = register(client)
    raw = token_of(issue(client, admin, user_named(client, name).id))
    reader = browser(client, "en")
    token = form_token(reader.get(f"/reset/{raw}").text)
    weak = reader.post(
        f"/reset/{raw}", data={"password": "12345678", "password_again": "12345678", "form_token": token}
    )
    assert weak.status_code == 422 and "simple sequence" in weak.text
    differ = reader.post(
        f"/reset/{raw}",
        data={"password": NEW_PASSWORD, "password_again": NEW_PASSWORD + "x", "form_token": token},
    )
    assert differ.status_code == 400 and "The two passwords differ." in differ.text
    stale = reader.post(f"/reset/{raw}", data={"password": NEW_PASSWORD, "password_again": NEW_PASSWORD})
    assert stale.status_code == 400 and "This form expired" in stale.text
    assert set_password(reader, raw).status_code == 303


def test_who_may_issue_a_link(client: TestClient) -> None:
    teacher, teacher_token = make_instructor(client)
    member, member_token = register(client)
    outsider, _ = register(client)
    other_teacher, _ = make_instructor(client)
    make_class(client, teacher, [member, other_teacher])
    member_id, outsider_id = user_named(client, member).id, user_named(client, outsider).id
    # An instructor: a learner of their class, nobody else (not even an instructor in it).
    assert issue(client, teacher_token, member_id).startswith("https://judge.example.org/reset/")
    for user_id in (outsider_id, user_named(client, other_teacher).id, 999999):
        res = client.post(f"/api/users/{user_id}/reset-link", headers=bearer(teacher_token))
        error_of(res, 404, "not_found")
    # A learner: nobody, themself included (they change their password with the old one).
    for user_id in (outsider_id, member_id):
        res = client.post(f"/api/users/{user_id}/reset-link", headers=bearer(member_token))
        error_of(res, 404, "not_found")
    assert client.post(f"/api/users/{member_id}/reset-link").status_code == 401
    # An admin: anyone, but a disabled account is enabled first.
    _, admin = make_admin(client)
    assert issue(client, admin, outsider_id)
    client.post(f"/api/admin/users/{outsider_id}/disable", headers=bearer(admin))
    res = client.post(f"/api/users/{outsider_id}/reset-link", headers=bearer(admin))
    error_of(res, 409, "account_disabled")


def test_the_admin_page_offers_a_reset_link(client: TestClient) -> None:
    admin, _ = make_admin(client)
    name, _ = register(client)
    reader = browser(client, "en")
    login = reader.get("/login")
    res = reader.post(
        "/login", data={"username": admin, "password": PASSWORD, "form_token": form_token(login.text)}
    )
    assert res.status_code == 303
    page = reader.get("/admin")
    assert page.status_code == 200
    learner_id = user_named(client, name).id
    assert f'data-action="reset-link" data-user="{learner_id}"' in page.text


def test_using_links_is_counted_per_address(tmp_path: Path) -> None:
    # Three checks from the address: the admin's token, the learner's token, one try of the link.
    settings = make_settings(tmp_path, workers=0, password_checks_per_address=3)
    with make_client(settings) as client:
        _, admin = make_admin(client)  # its token request is one check of the address
        name, _ = register(client)
        raw = token_of(issue(client, admin, user_named(client, name).id))
        reader = browser(client, "en")
        token = form_token(reader.get(f"/reset/{raw}").text)
        weak = {"password": "12345678", "password_again": "12345678", "form_token": token}
        assert reader.post(f"/reset/{raw}", data=weak).status_code == 422  # the second check
        res = reader.post(f"/reset/{raw}", data=weak)
        assert res.status_code == 429 and "Try again in" in res.text


def test_two_tries_at_once_use_the_link_once(client: TestClient) -> None:
    _, admin = make_admin(client)
    name, _ = register(client)
    raw = token_of(issue(client, admin, user_named(client, name).id))
    readers = [browser(client, "en") for _ in range(2)]
    forms = [form_token(r.get(f"/reset/{raw}").text) for r in readers]
    start = threading.Barrier(len(readers))
    statuses: list[int] = []

    def post(reader: TestClient, token: str, password: str) -> None:
        start.wait()
        form = {"password": password, "password_again": password, "form_token": token}
        statuses.append(reader.post(f"/reset/{raw}", data=form).status_code)

    passwords = [NEW_PASSWORD, "another Pass phrase 7"]
    threads = [
        threading.Thread(target=post, args=args) for args in zip(readers, forms, passwords, strict=True)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert sorted(statuses) == [303, 410], statuses
    logged_in = [r for r in readers if SESSION_COOKIE in r.cookies]
    assert len(logged_in) == 1
    # The winner's password is the account's: exactly one of the two logs in.
    works = [
        client.post("/api/auth/login", json={"username": name, "password": p}).status_code == 200
        for p in passwords
    ]
    assert sorted(works) == [False, True]
