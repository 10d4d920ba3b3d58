"""The account pages as a browser uses them: forms, sessions, the language switch, redirects."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from tests.web.factories import PASSWORD, make_client, make_settings, register, unique_name
from web.deps import SESSION_COOKIE
from web.language import LANGUAGE_COOKIE
from web.pages.account import FORM_COOKIE


@pytest.fixture(scope="module")
def app_client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    with make_client(make_settings(tmp_path_factory.mktemp("pages"), workers=0)) as client:
        yield client


@pytest.fixture
def browser(app_client: TestClient) -> TestClient:
    """A fresh cookie jar on the shared app, like a new browser profile."""
    return TestClient(app_client.app, follow_redirects=False)


def form_token(page_html: str) -> str:
    found = re.search(r'name="form_token" value="([^"]+)"', page_html)
    assert found, "the form carries no form token"
    return found.group(1)


def csrf_of(page_html: str) -> str:
    found = re.search(r'<meta name="csrf-token" content="([^"]*)"', page_html)
    assert found
    return found.group(1)


def register_in_browser(browser: TestClient, username: str, next_path: str = "/problems/204") -> None:
    page = browser.get(f"/register?next={next_path}")
    assert page.status_code == 200
    res = browser.post(
        "/register",
        data={
            "username": username,
            "password": PASSWORD,
            "password_again": PASSWORD,
            "next": next_path,
            "form_token": form_token(page.text),
        },
    )
    assert res.status_code == 303, res.text
    assert res.headers["location"] == next_path
    assert SESSION_COOKIE in browser.cookies


def test_register_logs_in_and_goes_where_it_was_asked(browser: TestClient) -> None:
    name = unique_name("web")
    register_in_browser(browser, name)
    page = browser.get("/problems/204")
    assert page.status_code == 200 and name in page.text
    assert csrf_of(page.text), "a logged-in page hands the script its CSRF token"
    me = browser.get("/api/me")
    assert me.json()["username"] == name and me.json()["language"] == "zh"


def test_login_form_errors_keep_the_username_and_say_why(app_client: TestClient, browser: TestClient) -> None:
    name, _ = register(app_client)
    page = browser.get("/login")
    res = browser.post(
        "/login", data={"username": name, "password": "wrong password", "form_token": form_token(page.text)}
    )
    assert res.status_code == 401
    assert "用户名或密码错误" in res.text and "wrong username" not in res.text.lower()  # one language
    assert f'value="{name}"' in res.text
    assert SESSION_COOKIE not in browser.cookies
    # Right password: logged in, sent to the default page.
    res = browser.post(
        "/login", data={"username": name, "password": PASSWORD, "form_token": form_token(res.text)}
    )
    assert res.status_code == 303 and res.headers["location"] == "/problems"
    assert SESSION_COOKIE in browser.cookies


def test_a_form_from_another_site_is_refused(app_client: TestClient) -> None:
    """Login CSRF: a page elsewhere cannot post a login without the token of our own form."""
    name, _ = register(app_client)
    stranger = TestClient(app_client.app, follow_redirects=False)
    res = stranger.post("/login", data={"username": name, "password": PASSWORD, "form_token": "guess"})
    assert res.status_code == 400
    assert SESSION_COOKIE not in stranger.cookies
    # The cookie half alone is not enough either.
    stranger.cookies.set(FORM_COOKIE, "abc")
    res = stranger.post("/login", data={"username": name, "password": PASSWORD, "form_token": "abd"})
    assert res.status_code == 400 and SESSION_COOKIE not in stranger.cookies


@pytest.mark.parametrize(
    ("username", "password", "again", "says"),
    [
        ("ab", PASSWORD, PASSWORD, "3 to 32"),
        ("bad name!", PASSWORD, PASSWORD, "3 to 32"),
        (None, "short", "short", "at least 8"),
        (None, PASSWORD, PASSWORD + "x", "differ"),
    ],
)
def test_register_form_explains_bad_input(
    browser: TestClient, username: str | None, password: str, again: str, says: str
) -> None:
    browser.cookies.set(LANGUAGE_COOKIE, "en")
    page = browser.get("/register")
    res = browser.post(
        "/register",
        data={
            "username": username or unique_name("web"),
            "password": password,
            "password_again": again,
            "form_token": form_token(page.text),
        },
    )
    assert res.status_code == 400
    assert says in res.text
    assert SESSION_COOKIE not in browser.cookies


def test_taken_username_is_a_clear_error(app_client: TestClient, browser: TestClient) -> None:
    name, _ = register(app_client)
    page = browser.get("/register")
    res = browser.post(
        "/register",
        data={
            "username": name.upper(),
            "password": PASSWORD,
            "password_again": PASSWORD,
            "form_token": form_token(page.text),
        },
    )
    assert res.status_code == 409 and f"用户名 {name.upper()} 已被占用" in res.text


@pytest.mark.parametrize(
    "target", ["//evil.example/x", "https://evil.example/", "/\\evil.example", "javascript:alert(1)"]
)
def test_next_never_leaves_the_site(browser: TestClient, target: str) -> None:
    name = unique_name("web")
    page = browser.get("/register", params={"next": target})
    # The form posts back only a path on this site (the header's links may quote the URL: they
    # lead to these same forms, which check again).
    assert '<input type="hidden" name="next" value="/problems">' in page.text
    res = browser.post(
        "/register",
        data={
            "username": name,
            "password": PASSWORD,
            "password_again": PASSWORD,
            "next": target,
            "form_token": form_token(page.text),
        },
    )
    assert res.status_code == 303 and res.headers["location"] == "/problems"


def test_logout_needs_the_csrf_token_and_ends_the_session(browser: TestClient) -> None:
    register_in_browser(browser, unique_name("web"))
    refused = browser.post("/logout")
    assert refused.status_code == 403 and SESSION_COOKIE in browser.cookies
    csrf = csrf_of(browser.get("/problems").text)
    res = browser.post("/logout", data={"csrf_token": csrf})
    assert res.status_code == 303
    assert browser.get("/api/me").status_code == 401
    assert browser.get("/settings").status_code == 303


def test_language_switch_for_visitors_and_accounts(browser: TestClient) -> None:
    # Chinese by default, whatever the browser asks for.
    page = browser.get("/problems", headers={"Accept-Language": "en-US"})
    assert '<html lang="zh-CN">' in page.text and "题目" in page.text
    res = browser.post("/lang", data={"lang": "en", "next": "/leaderboard"})
    assert res.status_code == 303 and res.headers["location"] == "/leaderboard"
    page = browser.get("/leaderboard")
    assert '<html lang="en">' in page.text and "Leaderboard" in page.text and "排行榜" not in page.text
    # An account keeps its language in the database: it follows the learner to another browser.
    name = unique_name("web")
    register_in_browser(browser, name)  # registered from an English page: English account
    assert browser.get("/api/me").json()["language"] == "en"
    csrf = csrf_of(browser.get("/problems").text)
    assert browser.post("/lang", data={"lang": "zh", "csrf_token": csrf}).status_code == 303
    other = TestClient(browser.app, follow_redirects=False)
    login_page = other.get("/login")
    other.post(
        "/login", data={"username": name, "password": PASSWORD, "form_token": form_token(login_page.text)}
    )
    assert '<html lang="zh-CN">' in other.get("/problems").text
    # An unknown language changes nothing.
    assert browser.post("/lang", data={"lang": "xx", "csrf_token": csrf}).status_code == 303
    assert browser.get("/api/me").json()["language"] == "zh"


def test_settings_lists_tokens_without_their_secret(app_client: TestClient, browser: TestClient) -> None:
    name = unique_name("web")
    register_in_browser(browser, name)
    csrf = csrf_of(browser.get("/settings").text)
    made = browser.post("/api/me/tokens", json={"name": "laptop-<b>"}, headers={"X-CSRF-Token": csrf})
    assert made.status_code == 201
    page = browser.get("/settings")
    assert page.status_code == 200
    assert made.json()["token"] not in page.text
    assert made.json()["token"][:10] in page.text
    assert "laptop-&lt;b&gt;" in page.text and "laptop-<b>" not in page.text
