"""In the browser: the settings page's password form and the admin page's Disable / Enable."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.web.factories import PASSWORD, unique_name
from tests.web.pages.test_browser import Site, admin_via_cli, log_in_via_ui, ready, serving_site

NEW_PASSWORD = "a new Pass phrase 9"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    with serving_site(tmp_path_factory, JUDGE_WORKERS="0") as s:
        yield s


def api_login(site: Site, name: str, password: str = PASSWORD) -> httpx.Response:
    return httpx.post(f"{site.url}/api/auth/login", json={"username": name, "password": password})


def test_an_admin_disables_and_enables_a_learner_and_changes_their_password(page: Page, site: Site) -> None:
    admin = unique_name("admin")
    admin_via_cli(site, admin)
    learner = unique_name("learner")
    made = httpx.post(f"{site.url}/api/auth/register", json={"username": learner, "password": PASSWORD})
    assert made.status_code == 201, made.text

    page.goto("/login")
    log_in_via_ui(page, admin)
    page.wait_for_url("**/problems")
    page.goto("/admin")
    ready(page)
    row = page.get_by_test_id("admin-users").locator("tr", has_text=learner)
    row.get_by_role("button", name="停用").click()
    expect(row).to_contain_text("已停用")
    assert api_login(site, learner).json()["error"]["code"] == "account_disabled"
    own = page.get_by_test_id("admin-users").locator("tr", has_text=admin)
    expect(own.get_by_role("button")).to_have_count(0)  # no button to disable themself
    row.get_by_role("button", name="启用").click()
    expect(row).to_contain_text("正常")
    assert api_login(site, learner).status_code == 200

    page.goto("/settings")
    ready(page)
    page.get_by_label("当前密码").fill(PASSWORD)
    page.get_by_label("新密码", exact=True).fill(NEW_PASSWORD)
    page.get_by_label("再次输入新密码").fill(NEW_PASSWORD)
    page.get_by_role("button", name="修改密码").click()
    expect(page.get_by_test_id("password-changed")).to_be_visible()
    assert api_login(site, admin, NEW_PASSWORD).status_code == 200
