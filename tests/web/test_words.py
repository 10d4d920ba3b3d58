"""What the site says, in one language at a time: API errors, error pages, the login wall,
log-out's way back, dates and the verdict CE (issue 20, item 6)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from judge.core.messages import msg
from judge.core.verdicts import Verdict, label
from tests.web.factories import PASSWORD, bearer, error_of, make_client, make_settings, register, unique_name
from web.language import LANGUAGE_COOKIE

CJK = re.compile(r"[\u3400-\u9fff\uff00-\uffef]")
# English words in a Chinese message, leaving out the names a message may quote (the site's
# own terms: a header, a token's kind, a unit).
LATIN_WORD = re.compile(r"[A-Za-z]{3,}")
TERMS = {"API", "CSRF", "KiB", "Authorization", "Bearer", "token", "body", "query", "username", "chapter"}


def one_language(text: str, lang: str, *quoted: str) -> None:
    """`text` is all in `lang`: no Chinese in English, no English words in Chinese (but the
    values it quotes, a username or an id, which belong to no language)."""
    for value in quoted:
        text = text.replace(value, "")
    if lang == "en":
        assert not CJK.search(text), f"Chinese in an English message: {text!r}"
        assert LATIN_WORD.search(text), f"not English: {text!r}"
    else:
        assert CJK.search(text), f"no Chinese in a Chinese message: {text!r}"
        words = set(LATIN_WORD.findall(text)) - TERMS
        assert not words, f"English {sorted(words)} in a Chinese message: {text!r}"


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    settings = make_settings(tmp_path_factory.mktemp("words"), workers=0, max_code_bytes=2048)
    with make_client(settings) as client:
        yield client


def fresh(app: TestClient, **kwargs: Any) -> TestClient:
    """A new browser on the same app: its own cookies."""
    return TestClient(app.app, follow_redirects=False, **kwargs)


# ------------------------------------------------------------------ the API's errors


def test_an_api_error_speaks_the_readers_language_only(app: TestClient) -> None:
    name, token = register(app)
    taken = {"username": name.upper(), "password": PASSWORD}
    asked = {
        "zh": {},
        "en": {"Accept-Language": "en-GB,en;q=0.9"},
    }
    seen: dict[str, str] = {}
    for lang, headers in asked.items():
        message = error_of(app.post("/api/auth/register", json=taken, headers=headers), 409, "username_taken")
        one_language(message, lang, name.upper())
        assert name.upper() in message
        seen[lang] = message
        as_learner = {**bearer(token), **headers}
        admin_only = error_of(app.get("/api/admin/users", headers=as_learner), 403, "admin_only")
        one_language(admin_only, lang)
        missing = error_of(app.get("/api/submissions/987654", headers=as_learner), 404, "not_found")
        one_language(missing, lang, "987654")
        assert "987654" in missing
        anonymous = error_of(app.get("/api/me", headers=headers), 401, "login_required")
        one_language(anonymous, lang)
        no_route = error_of(app.get("/api/no/such/thing", headers=headers), 404, "not_found")
        one_language(no_route, lang)
        wrong = {"username": name, "password": "not the password"}
        refused = app.post("/api/auth/login", json=wrong, headers=headers)
        one_language(error_of(refused, 401, "bad_credentials"), lang)
    assert seen["zh"] == f"用户名 {name.upper()} 已被占用。"
    assert seen["en"] == f"The username {name.upper()} is taken."


def test_lang_and_the_cookie_choose_too_and_lang_wins(app: TestClient) -> None:
    _name, token = register(app)
    url = "/api/submissions/987654"
    by_query = error_of(app.get(f"{url}?lang=en", headers=bearer(token)), 404, "not_found")
    assert by_query == "There is no submission 987654."
    browser = fresh(app)
    browser.cookies.set(LANGUAGE_COOKIE, "en")
    assert error_of(browser.get(url, headers=bearer(token)), 404, "not_found") == by_query
    # The site's script sends its page's language; ?lang= is stronger still.
    both = {**bearer(token), "Accept-Language": "en"}
    zh = error_of(browser.get(f"{url}?lang=zh", headers=both), 404, "not_found")
    assert zh == "提交 987654 不存在。"


def test_invalid_requests_and_large_code_name_the_problem_in_one_language(app: TestClient) -> None:
    _name, token = register(app)
    for lang, headers in {"zh": {}, "en": {"Accept-Language": "en"}}.items():
        short = {"username": "ab", "password": PASSWORD}
        res = app.post("/api/auth/register", json=short, headers=headers)
        message = error_of(res, 422, "invalid_request")
        one_language(message, lang, "body.username")
        assert "body.username" in message and res.json()["error"]["details"][0]["where"] == "body.username"
        big = {"problem_id": "204", "code": "x" * 4096, "mode": "run"}
        res = app.post("/api/submissions", json=big, headers={**bearer(token), **headers})
        too_large = error_of(res, 413, "code_too_large")
        one_language(too_large, lang, "2")
        assert "2 KiB" in too_large


def test_a_rate_limit_says_how_long_to_wait_in_one_language(tmp_path_factory: pytest.TempPathFactory) -> None:
    settings = make_settings(tmp_path_factory.mktemp("limits"), workers=0, registrations_per_address=1)
    with make_client(settings) as client:
        register(client)
        again = {"username": unique_name(), "password": PASSWORD}
        for lang, headers in {"zh": {}, "en": {"Accept-Language": "en"}}.items():
            res = client.post("/api/auth/register", json=again, headers=headers)
            message = error_of(res, 429, "rate_limited")
            seconds = res.headers["Retry-After"]
            one_language(message, lang, seconds)
            assert seconds in message


# ------------------------------------------------------------------ error pages


def page_text(html: str) -> str:
    main = html[html.index("<main") : html.index("</main>")]
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", main)).strip()


def test_a_missing_page_says_so_in_plain_words_and_links_back(app: TestClient) -> None:
    browser = fresh(app)
    zh = browser.get("/problems/999")
    assert zh.status_code == 404 and zh.headers["content-type"].startswith("text/html")
    text = page_text(zh.text)
    assert "页面不存在" in text and "题目 999 不存在。" in text and "返回题目列表" in text
    assert 'href="/problems"' in zh.text
    assert 'data-testid="error-code"' in zh.text and "not_found" in text  # small, for a bug report
    one_language(text.replace("not_found", ""), "zh", "999", "404")
    browser.cookies.set(LANGUAGE_COOKIE, "en")
    en = page_text(browser.get("/problems/999").text)
    assert "This page does not exist" in en and "There is no problem 999." in en
    assert "Back to the problems" in en
    one_language(en.replace("not_found", ""), "en", "999", "404")
    nowhere = browser.get("/no/such/page")
    assert nowhere.status_code == 404 and "There is nothing at this address." in nowhere.text


def test_a_learner_at_the_admin_page_is_told_who_may_open_it(app: TestClient) -> None:
    _name, token = register(app)
    res = app.get("/admin", headers=bearer(token))
    assert res.status_code == 403
    text = page_text(res.text)
    assert "你无权打开这个页面" in text and "只有管理员可以这样做。" in text
    assert "admin_only" in text and "403 admin_only" not in text  # the code is no sentence's head
    one_language(text.replace("admin_only", ""), "zh", "403")


def test_a_too_large_form_is_a_page_in_the_pages_language(app: TestClient) -> None:
    browser = fresh(app)
    browser.cookies.set(LANGUAGE_COOKIE, "en")
    res = browser.post("/login", data={"username": "x", "password": "y", "form_token": "z" * 70_000})
    assert res.status_code == 413 and res.headers["content-type"].startswith("text/html")
    text = page_text(res.text)
    assert "This is too large to send" in text and "The request is larger than" in text
    one_language(text.replace("payload_too_large", ""), "en", "413")


def test_a_crash_is_a_page_that_blames_the_server(tmp_path_factory: pytest.TempPathFactory) -> None:
    with make_client(make_settings(tmp_path_factory.mktemp("crash"), workers=0)) as client:
        app: FastAPI = client.app  # type: ignore[assignment]

        def broken() -> None:
            raise RuntimeError("a bug")

        app.add_api_route("/broken-page", broken)
        app.add_api_route("/api/broken", broken)
        browser = TestClient(app, raise_server_exceptions=False)
        page = browser.get("/broken-page")
        assert page.status_code == 500 and page.headers["content-type"].startswith("text/html")
        text = page_text(page.text)
        assert "服务器出错了" in text and "这不是你的问题" in text and "刷新此页" in text
        assert "a bug" not in page.text  # what broke stays in the server's log
        api = browser.get("/api/broken", headers={"Accept-Language": "en"})
        assert error_of(api, 500, "internal_error") == "Something broke on the server."


# ------------------------------------------------------------------ login wall, log-out


def logged_in(app: TestClient) -> tuple[TestClient, str]:
    browser = fresh(app)
    page = browser.get("/register")
    token = re.search(r'name="form_token" value="([^"]+)"', page.text)
    assert token is not None
    name = unique_name("words")
    form = {"username": name, "password": PASSWORD, "password_again": PASSWORD, "form_token": token[1]}
    assert browser.post("/register", data=form).status_code == 303
    csrf = re.search(r'<meta name="csrf-token" content="([^"]+)"', browser.get("/problems").text)
    assert csrf is not None
    return browser, csrf[1]


def test_a_page_behind_the_login_says_why_the_login_form_is_there(app: TestClient) -> None:
    browser = fresh(app)
    res = browser.get("/settings")
    assert res.status_code == 303 and res.headers["location"] == "/login?next=%2Fsettings&needed=1"
    login = browser.get(res.headers["location"])
    assert 'data-testid="login-needed"' in login.text and "登录后才能打开那个页面" in login.text
    assert '<input type="hidden" name="next" value="/settings">' in login.text
    # Asked for by the reader (the header's link): no such notice.
    assert 'data-testid="login-needed"' not in browser.get("/login?next=/problems/204").text


@pytest.mark.parametrize(
    ("here", "back_to"),
    [
        ("/problems/204", "/problems/204"),
        ("/problems?chapter=01", "/problems?chapter=01"),
        ("/leaderboard", "/leaderboard"),
        ("/settings", "/problems"),  # an account's page: a visitor has no business there
        ("/submissions/1", "/problems"),
        ("//evil.example/", "/problems"),
    ],
)
def test_log_out_returns_to_the_page_when_a_visitor_may_read_it(
    app: TestClient, here: str, back_to: str
) -> None:
    browser, csrf = logged_in(app)
    res = browser.post("/logout", data={"csrf_token": csrf, "next": here})
    assert res.status_code == 303 and res.headers["location"] == back_to
    assert browser.get("/api/me").status_code == 401


def test_the_log_out_form_carries_the_page_it_is_on(app: TestClient) -> None:
    browser, _csrf = logged_in(app)
    page = browser.get("/problems/204")
    form = re.search(r'<form method="post" action="/logout".*?</form>', page.text, re.S)
    assert form is not None and '<input type="hidden" name="next" value="/problems/204">' in form[0]


# ------------------------------------------------------------------ dates, CE, the role


def test_server_rendered_dates_have_the_one_format(app: TestClient) -> None:
    browser, csrf = logged_in(app)
    created = browser.post("/api/me/tokens", json={"name": "laptop"}, headers={"X-CSRF-Token": csrf})
    assert created.status_code == 201, created.text
    times = re.findall(r'<time datetime="([^"]+)">([^<]*)</time>', browser.get("/settings").text)
    assert times, "the token's creation time is shown"
    for iso, shown in times:
        assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC", shown), shown
        assert iso.startswith(shown[:10]) and iso[11:16] == shown[11:16]


def test_ce_means_the_code_could_not_be_loaded_in_both_languages(app: TestClient) -> None:
    assert label(Verdict.CE, "en") == "Load error" and label(Verdict.CE, "zh") == "无法加载"
    catalogs = app.app.state.platform.catalogs  # type: ignore[attr-defined]
    assert catalogs.translations("zh").gettext("Load error") == "无法加载"
    assert catalogs.js_messages("zh")["Load error"] == "无法加载"
    assert "Compile error" not in catalogs.js_messages("zh")


def test_the_role_is_administrator(app: TestClient) -> None:
    catalogs = app.app.state.platform.catalogs  # type: ignore[attr-defined]
    assert catalogs.translations("zh").gettext("Administrator") == "管理员"


def test_a_reports_warning_reads_in_one_language() -> None:
    # Warnings are kept in both languages apart; the API and the pages show the reader's.
    warning = msg("unsandboxed")
    one_language(warning.get("zh"), "zh")
    one_language(warning.get("en"), "en")
