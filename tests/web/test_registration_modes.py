"""The `registration` setting: open (the default) lets anyone make an account; closed refuses the
API and the register page alike, in the reader's language, while existing accounts still log in.
Real app, real SQLite and PostgreSQL: an account made while open is tried again once closed."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select

from tests.web.factories import (
    PASSWORD,
    error_of,
    make_client,
    make_settings,
    platform_of,
    register,
    unique_name,
)
from web.auth.models import User
from web.deps import SESSION_COOKIE
from web.language import LANGUAGE_COOKIE

CLOSED_ZH = "本站已关闭注册；如需账号，请联系站点管理员。"
CLOSED_EN = "Registration is closed on this site; ask its administrator for an account."


def form_token(page_html: str) -> str:
    found = re.search(r'name="form_token" value="([^"]+)"', page_html)
    assert found, "the form carries no form token"
    return found.group(1)


def browser(client: TestClient, lang: str) -> TestClient:
    reader = TestClient(client.app, follow_redirects=False)
    reader.cookies.set(LANGUAGE_COOKIE, lang)
    return reader


def users_named(client: TestClient, name: str) -> int:
    with platform_of(client).factory() as session:
        count: int = session.scalar(select(func.count()).where(User.username == name)) or 0
        return count


def test_open_is_the_default_and_shows_the_form(tmp_path: Path) -> None:
    settings = make_settings(tmp_path, workers=0)
    assert settings.registration == "open"
    with make_client(settings) as client:
        register(client)  # the API makes the account (201, checked inside)
        for lang, button in (("zh", "创建账号"), ("en", "Create account")):
            page = browser(client, lang).get("/register")
            assert page.status_code == 200 and 'action="/register"' in page.text
            assert button in page.text and CLOSED_ZH not in page.text and CLOSED_EN not in page.text
        assert 'href="/register' in browser(client, "zh").get("/login").text  # open: offered


def test_a_bad_mode_is_refused() -> None:
    with pytest.raises(ValueError, match="registration"):
        make_settings(Path("/nonexistent"), registration="friends")


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_closed_refuses_new_accounts_and_lets_old_ones_in(
    tmp_path: Path, backend: str, request: pytest.FixtureRequest
) -> None:
    url = request.getfixturevalue("postgres_url") if backend == "postgres" else None
    old = unique_name("old")
    with make_client(make_settings(tmp_path, url, workers=0)) as client:
        register(client, old)
    with make_client(make_settings(tmp_path, url, workers=0, registration="closed")) as client:
        # The API: 403 registration_closed, worded in the reader's language, nothing made.
        new = unique_name("new")
        body = {"username": new, "password": PASSWORD}
        res = client.post("/api/auth/register", json=body)
        assert error_of(res, 403, "registration_closed") == CLOSED_ZH
        res = client.post("/api/auth/register", json=body, headers={"Accept-Language": "en"})
        assert error_of(res, 403, "registration_closed") == CLOSED_EN
        assert users_named(client, new) == 0

        for lang, closed, other in (("zh", CLOSED_ZH, CLOSED_EN), ("en", CLOSED_EN, CLOSED_ZH)):
            reader = browser(client, lang)
            # The page says so in place of the form, in one language; the log-in link stays.
            page = reader.get("/register")
            assert page.status_code == 200
            assert closed in page.text and other not in page.text
            assert 'action="/register"' not in page.text and 'href="/login' in page.text
            # No page offers a "Register" link that would only lead here.
            for path in ("/login", "/problems", "/problems/204"):
                assert 'href="/register' not in reader.get(path).text, path
            # A form posted anyway (opened before the site closed; the log-in page's token is the
            # same cookie's) is refused the same way.
            token = form_token(reader.get("/login").text)
            form = {"username": new, "password": PASSWORD, "password_again": PASSWORD, "form_token": token}
            res = reader.post("/register", data=form)
            assert res.status_code == 403 and closed in res.text
            assert SESSION_COOKIE not in reader.cookies and users_named(client, new) == 0

            # An existing account still logs in: the API, and the log-in form.
            res = client.post("/api/auth/login", json={"username": old, "password": PASSWORD})
            assert res.status_code == 200, res.text
            login = reader.get("/login")
            res = reader.post(
                "/login", data={"username": old, "password": PASSWORD, "form_token": form_token(login.text)}
            )
            assert res.status_code == 303 and SESSION_COOKIE in reader.cookies
