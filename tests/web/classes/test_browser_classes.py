"""A class in a real Chromium: an instructor (made with `judge admin create --role instructor`)
makes a class and an assignment on /classes/{id} at 1366x900 in Chinese, in Shanghai's time
zone; a learner in London joins with the code on a 390x844 phone in English and sees what is
due, in their own time zone. Screenshots land in JUDGE_SCREENSHOT_DIR as in test_browser.py."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from playwright.sync_api import Browser, FilePayload, expect

from tests.web.factories import unique_name
from tests.web.pages.sizes import SIZES
from tests.web.pages.test_browser import (
    Site,
    admin_via_cli,
    log_in_via_ui,
    no_overflow,
    ready,
    register_via_ui,
    serving_site,
    switch_language,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SHANGHAI, LONDON = "Asia/Shanghai", "Europe/London"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    with serving_site(tmp_path_factory, JUDGE_WORKERS="0") as s:  # nothing is judged here
        yield s


def local_input(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M")


def test_an_instructor_sets_an_assignment_and_a_learner_joins_on_a_phone(
    browser: Browser, site: Site
) -> None:
    teacher = unique_name("teacher")
    admin_via_cli(site, teacher, role="instructor")
    desk = browser.new_context(base_url=site.url, viewport=SIZES["desktop"], timezone_id=SHANGHAI)
    page = desk.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto("/login")
    log_in_via_ui(page, teacher)
    page.wait_for_url("**/problems")
    ready(page)
    page.get_by_role("link", name="班级").click()
    ready(page)
    page.get_by_label("新班级").fill("周三晚班")
    page.get_by_role("button", name="创建").click()
    page.wait_for_url("**/classes/*")
    ready(page)
    expect(page.get_by_role("heading", level=1)).to_have_text("周三晚班")
    code = page.get_by_test_id("join-code").inner_text().strip()
    assert len(code) == 8
    expect(page.get_by_test_id("time-zone")).to_contain_text(SHANGHAI)

    # The times are typed on Shanghai's clock; the API stores the instant in UTC.
    here = datetime.now(ZoneInfo(SHANGHAI)).replace(second=0, microsecond=0)
    opens, due = here - timedelta(hours=1), here + timedelta(days=2)
    form = page.get_by_test_id("assignment-form")
    form.get_by_label("标题").fill("第一周：归一化")
    form.get_by_label("题目（按顺序写题号，用逗号或空格分隔）").fill("204")
    form.get_by_label("开放时间").fill(local_input(opens))
    form.get_by_label("截止时间").fill(local_input(due))
    form.get_by_test_id("save-assignment").click()
    expect(page.get_by_test_id("class-message")).to_contain_text("作业已创建")
    ready(page)
    article = page.get_by_test_id("assignment")
    expect(article).to_contain_text("第一周：归一化")
    expect(article.locator("dd time").nth(1)).to_have_text(local_input(due).replace("T", " "))
    class_id = page.url.rstrip("/").rsplit("/", 1)[1]
    stored = page.request.get(f"/api/classes/{class_id}").json()["assignments"][0]
    assert datetime.fromisoformat(stored["due_at"]) == due.astimezone(UTC)
    no_overflow(page)
    page.screenshot(path=site.shots / "class-instructor-desktop.png", full_page=True)

    # The learner, in London, on a phone, in English.
    learner = unique_name("pupil")
    phone = browser.new_context(
        base_url=site.url, viewport=SIZES["phone"], is_mobile=True, timezone_id=LONDON
    )
    mobile = phone.new_page()
    mobile.on("pageerror", lambda exc: errors.append(str(exc)))
    register_via_ui(mobile, learner)
    switch_language(mobile, "en")
    mobile.get_by_role("link", name="Classes").click()
    ready(mobile)
    expect(mobile.get_by_test_id("nothing-due")).to_be_visible()
    no_overflow(mobile)
    mobile.get_by_label("Join a class with its code").fill(f"{code[:4].lower()} {code[4:].lower()}")
    mobile.get_by_role("button", name="Join", exact=True).click()
    mobile.wait_for_url(f"**/classes/{class_id}")
    ready(mobile)
    expect(mobile.get_by_test_id("progress")).to_contain_text(learner)
    no_overflow(mobile)
    mobile.screenshot(path=site.shots / "class-learner-phone.png", full_page=True)
    mobile.get_by_role("link", name="Classes").first.click()
    ready(mobile)
    item = mobile.get_by_test_id("due-item")
    expect(item).to_have_count(1)
    expect(item).to_contain_text("第一周：归一化")
    expect(item).to_contain_text("New")
    in_london = due.astimezone(ZoneInfo(LONDON)).strftime("%Y-%m-%d %H:%M")
    expect(item.locator("time")).to_have_text(in_london)
    no_overflow(mobile)
    mobile.screenshot(path=site.shots / "classes-learner-phone.png", full_page=True)

    # Back on the instructor's page: the learner is a member, with a progress row; on a phone
    # too, the tables are cards inside the screen.
    page.reload()
    ready(page)
    expect(page.get_by_test_id("members")).to_contain_text(learner)
    expect(page.get_by_test_id("member-count")).to_have_text("1")
    expect(page.get_by_test_id("progress")).to_contain_text(learner)
    page.set_viewport_size(SIZES["phone"])
    no_overflow(page)
    page.screenshot(path=site.shots / "class-instructor-phone.png", full_page=True)
    page.set_viewport_size(SIZES["tablet"])
    no_overflow(page)
    page.set_viewport_size(SIZES["desktop"])

    # Edit: the form comes back with the times on the reader's clock, as they were typed.
    page.get_by_role("button", name="编辑").click()
    expect(form.get_by_label("截止时间")).to_have_value(local_input(due))
    expect(form.get_by_label("题目（按顺序写题号，用逗号或空格分隔）")).to_have_value("204")
    form.get_by_label("标题").fill("第一周：RMSNorm")
    form.get_by_test_id("save-assignment").click()
    expect(page.get_by_test_id("class-message")).to_contain_text("作业已保存")
    ready(page)
    expect(page.get_by_test_id("assignment")).to_contain_text("第一周：RMSNorm")
    # An extension for the learner, a day after the due time.
    extension = page.get_by_test_id("extension-form")
    extension.get_by_label("延期给").select_option(label=learner)
    extension.get_by_label("至").fill(local_input(due + timedelta(days=1)))
    extension.get_by_role("button", name="给予").click()
    expect(page.get_by_test_id("class-message")).to_contain_text("已给予延期")
    ready(page)
    expect(page.get_by_test_id("extensions")).to_contain_text(learner)
    # A CSV file of names: one unknown name and nobody is added, the unknown one named.
    members = page.get_by_test_id("add-members")

    def csv_file(text: str) -> FilePayload:
        return {"name": "names.csv", "mimeType": "text/csv", "buffer": text.encode()}

    members.get_by_label("或一个用户名的 CSV 文件（第一列；表头行可有可无）").set_input_files(
        csv_file(f"用户名\n{learner}\nghost_nobody\n")
    )
    members.get_by_role("button", name="添加").click()
    expect(page.get_by_test_id("class-message")).to_contain_text("ghost_nobody")
    expect(page.get_by_test_id("member-count")).to_have_text("1")
    members.get_by_label("或一个用户名的 CSV 文件（第一列；表头行可有可无）").set_input_files(
        csv_file(f"username\n{learner.upper()}\n")
    )
    members.get_by_role("button", name="添加").click()
    expect(page.get_by_test_id("class-message")).to_contain_text(f"已在班级中：{learner}")
    mobile.reload()
    ready(mobile)
    expect(item).to_contain_text("extended for you")
    extended = (due + timedelta(days=1)).astimezone(ZoneInfo(LONDON)).strftime("%Y-%m-%d %H:%M")
    expect(item.locator("time")).to_have_text(extended)
    desk.close()
    phone.close()
    assert not errors, errors


def test_an_admin_gives_the_instructor_role_on_the_classes_page(browser: Browser, site: Site) -> None:
    admin, learner = unique_name("admin"), unique_name("soon_teacher")
    admin_via_cli(site, admin)
    context = browser.new_context(base_url=site.url, viewport=SIZES["tablet"])
    page = context.new_page()
    register_via_ui(page, learner)
    context.clear_cookies()
    page.goto("/login")
    log_in_via_ui(page, admin)
    page.wait_for_url("**/problems")
    page.goto("/classes")
    ready(page)
    form = page.get_by_test_id("set-role")
    form.get_by_label("用户名").fill("no_such_person")
    form.get_by_role("button", name="设置角色").click()
    expect(page.get_by_test_id("classes-message")).to_contain_text("no_such_person")
    form.get_by_label("用户名").fill(learner.upper())  # names are one whatever their case
    form.get_by_role("button", name="设置角色").click()
    expect(page.get_by_test_id("classes-message")).to_contain_text(f"{learner} 现在是：教师")
    users = page.request.get("/api/admin/users").json()
    assert next(u["role"] for u in users if u["username"] == learner) == "instructor"
    no_overflow(page)
    page.screenshot(path=site.shots / "classes-admin-tablet.png", full_page=True)
    context.close()
