"""The site's words in a real Chromium: one language at a time, error pages for people, a
language switch that keeps what was typed, log-out that stays on the page (issue 20, item 6).

One `judge serve` for the module, judging nothing: none of this needs a verdict.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, ViewportSize, expect

from tests.web.factories import unique_name
from tests.web.pages.test_browser import (
    Site,
    checked_page,
    expect_console_errors,
    ready,
    serving_site,
    switch_language,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

DESKTOP: ViewportSize = {"width": 1366, "height": 900}
PHONE: ViewportSize = {"width": 390, "height": 844}
CJK = re.compile(r"[\u4e00-\u9fff]")
SECRET = "a-password-nobody-keeps"
# Every write of the carried-over fields, recorded where a reload cannot wipe it (window.name
# lasts for the tab), so the test reads exactly what was stored.
RECORD_TYPED = """
const setItem = Storage.prototype.setItem;
Storage.prototype.setItem = function (key, value) {
  if (key === "llm-judge:typed") window.name = value;
  return setItem.call(this, key, value);
};
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    with serving_site(tmp_path_factory, JUDGE_WORKERS="0") as s:
        yield s


@pytest.fixture
def page(browser: Browser, site: Site) -> Iterator[Page]:
    with checked_page(browser, site) as page:
        page.add_init_script(RECORD_TYPED)
        yield page


def stored_typing(page: Page) -> str:
    recorded: str = page.evaluate("() => window.name")
    return recorded


def register(page: Page, name: str) -> None:
    page.goto("/register")
    ready(page)
    page.locator("#username").fill(name)
    page.locator("#password").fill(SECRET)
    page.locator("#password_again").fill(SECRET)
    page.locator("form[action='/register'] button[type=submit]").click()
    page.wait_for_url("**/problems")
    ready(page)


def test_the_language_switch_keeps_what_was_typed_but_never_a_password(page: Page, site: Site) -> None:
    page.goto("/register")
    ready(page)
    name = unique_name("typed")
    page.locator("#username").fill(name)
    page.locator("#password").fill(SECRET)
    switch_language(page)
    assert page.evaluate("() => document.documentElement.lang") == "en"
    expect(page.get_by_role("heading", name="Register")).to_be_visible()
    expect(page.locator("#username")).to_have_value(name)
    expect(page.locator("#password")).to_have_value("")
    stored = stored_typing(page)
    assert name in stored and SECRET not in stored, stored
    assert page.evaluate("() => sessionStorage.getItem('llm-judge:typed')") is None  # used once
    page.screenshot(path=site.shots / "words-register-kept-en.png")
    # A page reached otherwise (no switch) gets nothing back.
    page.goto("/login")
    ready(page)
    expect(page.locator("#username")).to_have_value("")

    # Logged in, the settings page's token name survives the switch back to Chinese.
    register(page, unique_name("words"))
    page.goto("/settings")
    ready(page)
    page.locator("#token-name").fill("my-desk")
    switch_language(page)
    assert page.evaluate("() => document.documentElement.lang") == "zh-CN"
    expect(page.locator("#token-name")).to_have_value("my-desk")

    # Dates read one way, whoever wrote them: the script's new row and the server's page.
    page.get_by_role("button", name="创建令牌").click()
    expect(page.get_by_test_id("token-value")).not_to_be_empty()
    one_format = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d$")
    expect(page.locator("#tokens time").first).to_have_text(one_format)
    page.reload()
    ready(page)
    expect(page.locator("#tokens time").first).to_have_text(one_format)


def test_log_out_stays_on_a_page_a_visitor_may_read(page: Page) -> None:
    register(page, unique_name("words"))
    page.goto("/problems/204")
    ready(page)
    page.get_by_role("button", name="退出登录").click()
    # Logged out (the header offers to log in) and still on the problem.
    expect(page.get_by_role("banner").get_by_role("link", name="登录", exact=True)).to_be_visible()
    assert page.url.endswith("/problems/204")
    # From an account's own page the way out is the problem list.
    register(page, unique_name("words"))
    page.goto("/settings")
    ready(page)
    page.get_by_role("button", name="退出登录").click()
    page.wait_for_url("**/problems")


def test_an_error_page_speaks_plainly_in_each_language(browser: Browser, site: Site) -> None:
    for name, viewport in (("desktop", DESKTOP), ("phone", PHONE)):
        context = browser.new_context(base_url=site.url, viewport=viewport)
        page = context.new_page()
        page.goto("/problems/999")
        ready(page)
        expect(page.get_by_role("heading", name="页面不存在")).to_be_visible()
        expect(page.get_by_test_id("error-message")).to_have_text("题目 999 不存在。")
        expect(page.get_by_test_id("error-code")).to_contain_text("not_found")
        overflow = page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0, f"the error page is {overflow}px too wide"
        page.screenshot(path=site.shots / f"words-404-zh-{name}.png")
        switch_language(page)  # the switch returns to the same address: the same error, in English
        expect(page.get_by_role("heading", name="This page does not exist")).to_be_visible()
        message = page.get_by_test_id("error-message")
        expect(message).to_have_text("There is no problem 999.")
        assert not CJK.search(page.locator("main").inner_text())
        page.screenshot(path=site.shots / f"words-404-en-{name}.png")
        page.get_by_role("link", name="Back to the problems").click()
        page.wait_for_url("**/problems")
        context.close()


def test_an_api_error_on_the_page_is_in_the_pages_language_only(page: Page, site: Site) -> None:
    register(page, unique_name("words"))
    expect_console_errors(page, "status of 413")
    too_big = "# " + "x" * (70 * 1024) + "\n"
    for lang, says, never in (
        ("zh", "代码超过了 64 KiB。", "larger than"),
        ("en", "Your code is larger than 64 KiB.", "代码"),
    ):
        page.goto("/problems/204")
        ready(page)
        if page.evaluate("() => document.documentElement.lang") != ("zh-CN" if lang == "zh" else "en"):
            switch_language(page)
        page.evaluate("(code) => document.getElementById('editor').editor.setCode(code)", too_big)
        page.locator("#run").click()
        status = page.get_by_test_id("status")
        expect(status).to_contain_text(says)
        assert never not in status.inner_text()
        page.screenshot(path=site.shots / f"words-413-{lang}.png")
        page.evaluate("() => document.getElementById('editor').editor.setCode('')")


def test_the_login_wall_says_why_and_a_learner_at_the_admin_page_is_told_plainly(
    page: Page, site: Site
) -> None:
    name = unique_name("words")
    register(page, name)
    page.get_by_role("button", name="退出登录").click()
    expect(page.get_by_role("banner").get_by_role("link", name="登录", exact=True)).to_be_visible()
    page.goto("/settings")
    ready(page)
    expect(page.get_by_test_id("login-needed")).to_contain_text("登录后才能打开那个页面")
    page.screenshot(path=site.shots / "words-login-needed-zh.png")
    page.locator("#username").fill(name)
    page.locator("#password").fill(SECRET)
    page.locator("form[action='/login'] button[type=submit]").click()
    page.wait_for_url("**/settings")
    expect_console_errors(page, "status of 403")
    page.goto("/admin")
    ready(page)
    expect(page.get_by_role("heading", name="你无权打开这个页面")).to_be_visible()
    expect(page.get_by_test_id("error-message")).to_have_text("只有管理员可以这样做。")
    switch_language(page)
    expect(page.get_by_role("heading", name="You may not open this page")).to_be_visible()
    expect(page.get_by_test_id("error-message")).to_have_text("Only administrators may do this.")
    page.screenshot(path=site.shots / "words-403-en.png")
