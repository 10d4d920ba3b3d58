"""In the browser: an admin issues a reset link on /admin and the learner sets a new password with
it on a phone (390×844, English); an admin turns registration to invite codes on /admin, makes a
code, and a newcomer registers with it on the Chinese register page (1366×900). Screenshots go to
JUDGE_SCREENSHOT_DIR; the admin and settings pages are checked for width on a tablet and a phone."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from tests.web.factories import PASSWORD, unique_name
from tests.web.pages.sizes import SIZES
from tests.web.pages.test_browser import (
    Site,
    admin_via_cli,
    full_page_shot,
    log_in_via_ui,
    no_overflow,
    ready,
    serving_site,
)

NEW_PASSWORD = "a new Pass phrase 9"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    with serving_site(tmp_path_factory, JUDGE_WORKERS="0") as s:
        yield s


def as_admin(page: Page, site: Site) -> str:
    admin = unique_name("admin")
    admin_via_cli(site, admin)
    page.goto("/login")
    log_in_via_ui(page, admin)
    page.wait_for_url("**/problems")
    page.goto("/admin")
    ready(page)
    return admin


def test_an_admins_link_lets_a_learner_set_a_new_password_on_a_phone(
    page: Page, browser: Browser, site: Site
) -> None:
    learner = unique_name("learner")
    made = httpx.post(f"{site.url}/api/auth/register", json={"username": learner, "password": PASSWORD})
    assert made.status_code == 201, made.text
    as_admin(page, site)
    row = page.get_by_test_id("admin-users").locator("tr", has_text=learner)
    row.get_by_role("button", name="重置链接").click()
    shown = page.get_by_test_id("reset-link-url")
    expect(shown).to_contain_text("/reset/")
    expect(page.get_by_test_id("reset-link")).to_contain_text(learner)
    url = shown.inner_text().strip()
    full_page_shot(page, site.shots / "admin-reset-link.png")

    phone = browser.new_context(base_url=site.url, viewport=SIZES["phone"], is_mobile=True)
    host = site.url.split("//", 1)[1].split(":")[0]
    phone.add_cookies([{"name": "judge_lang", "value": "en", "domain": host, "path": "/"}])
    try:
        learner_page = phone.new_page()
        errors: list[str] = []
        learner_page.on("pageerror", lambda exc: errors.append(str(exc)))
        learner_page.goto(url)
        ready(learner_page)
        expect(learner_page.get_by_role("heading", name="Set a new password")).to_be_visible()
        expect(learner_page.locator("main")).to_contain_text(learner)
        no_overflow(learner_page)
        learner_page.screenshot(path=site.shots / "reset-phone-en.png", full_page=True)
        learner_page.get_by_label("New password", exact=True).fill(NEW_PASSWORD)
        learner_page.get_by_label("New password again").fill(NEW_PASSWORD)
        learner_page.get_by_role("button", name="Set the password").click()
        learner_page.wait_for_url("**/settings?password=reset*")
        expect(learner_page.get_by_test_id("password-reset")).to_be_visible()
        no_overflow(learner_page)
        learner_page.screenshot(path=site.shots / "reset-done-phone-en.png", full_page=True)
        # Once only: the same link now shows the one page of a dead link.
        learner_page.goto(url)
        expect(learner_page.get_by_test_id("reset-dead")).to_be_visible()
        no_overflow(learner_page)
        assert not errors, errors
    finally:
        phone.close()
    old = httpx.post(f"{site.url}/api/auth/login", json={"username": learner, "password": PASSWORD})
    assert old.status_code == 401
    new = httpx.post(f"{site.url}/api/auth/login", json={"username": learner, "password": NEW_PASSWORD})
    assert new.status_code == 200, new.text


def test_an_invite_code_made_on_admin_lets_a_newcomer_register_in_chinese(
    page: Page, browser: Browser, site: Site
) -> None:
    as_admin(page, site)
    modes = page.get_by_test_id("registration-mode")
    modes.get_by_label("仅限持有邀请码的人").check()
    modes.get_by_role("button", name="保存").click()
    expect(page.get_by_test_id("registration-saved")).to_be_visible()
    invite = page.get_by_test_id("new-invite")
    invite.get_by_label("备注").fill("春季班")
    invite.get_by_label("使用次数").fill("2")
    invite.get_by_role("button", name="创建邀请码").click()
    code = page.get_by_test_id("invite-code")
    expect(code).to_contain_text("inv-")
    invite_code = code.inner_text().strip()
    full_page_shot(page, site.shots / "admin-invites.png")
    page.reload()
    ready(page)
    expect(page.get_by_test_id("admin-invites")).to_contain_text("春季班")
    expect(page.get_by_test_id("admin-invites")).to_contain_text("0 / 2")
    assert invite_code not in page.content()  # shown once

    desk = browser.new_context(base_url=site.url, viewport=SIZES["desktop"])
    try:
        newcomer = desk.new_page()
        newcomer.goto("/register")
        ready(newcomer)
        name = unique_name("new")
        newcomer.get_by_label("用户名").fill(name)
        newcomer.get_by_label("密码", exact=True).fill(PASSWORD)
        newcomer.get_by_label("确认密码").fill(PASSWORD)
        newcomer.get_by_label("邀请码").fill("inv-wrongcode")
        newcomer.get_by_role("button", name="创建账号").click()
        expect(newcomer.get_by_test_id("form-error")).to_contain_text("此邀请码无效")
        no_overflow(newcomer)
        newcomer.get_by_label("密码", exact=True).fill(PASSWORD)
        newcomer.get_by_label("确认密码").fill(PASSWORD)
        newcomer.get_by_label("邀请码").fill(invite_code)
        newcomer.screenshot(path=site.shots / "register-invite-zh.png", full_page=True)
        newcomer.get_by_role("button", name="创建账号").click()
        newcomer.wait_for_url("**/problems")
        ready(newcomer)
        expect(newcomer.locator("header")).to_contain_text(name)
    finally:
        desk.close()
    page.reload()
    ready(page)
    expect(page.get_by_test_id("admin-invites")).to_contain_text("1 / 2")
    # The admin's new sections and the settings page's email fit a tablet and a phone.
    for size in ("tablet", "phone"):
        page.set_viewport_size(SIZES[size])
        for path in ("/admin", "/settings"):
            page.goto(path)
            ready(page)
            no_overflow(page)
        page.screenshot(path=site.shots / f"settings-{size}.png", full_page=True)
    page.goto("/admin")
    ready(page)
    page.get_by_test_id("registration-mode").screenshot(path=site.shots / "admin-registration-phone.png")
