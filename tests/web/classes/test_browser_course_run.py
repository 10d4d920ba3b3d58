"""A course, run end to end in a real Chromium against a real server that judges in Docker.

An instructor makes a class and an assignment due in about a minute (Chinese, 1366x900); two
learners join with the code, one on a phone in English who submits in time, one on a laptop in
Chinese who submits after the due time; the gradebook page and its CSV show the one in time and
the other late (not counted: the assignment does not count late work). The late learner then
forgets their password and sets a new one through a link their instructor issues on the class
page. Screenshots land in JUDGE_SCREENSHOT_DIR as in test_browser.py.
"""

from __future__ import annotations

import csv
import io
import time
from collections.abc import Iterator
from datetime import datetime, timedelta

import httpx
import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect

from tests.web.factories import PASSWORD, unique_name
from tests.web.pages.sizes import SIZES
from tests.web.pages.test_browser import (
    CORRECT,
    JUDGED_S,
    Site,
    admin_via_cli,
    log_in_via_ui,
    no_overflow,
    ready,
    register_via_ui,
    serving_site,
    set_code,
    switch_language,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

TIME_ZONE = "Asia/Shanghai"
NEW_PASSWORD = "a new Pass phrase 9"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    with serving_site(tmp_path_factory) as s:  # with workers: the submissions are judged
        yield s


def context(browser: Browser, site: Site, size: str) -> BrowserContext:
    return browser.new_context(
        base_url=site.url, viewport=SIZES[size], is_mobile=size == "phone", timezone_id=TIME_ZONE
    )


def on_readers_clock(page: Page, moment: datetime) -> str:
    """A moment as a datetime-local input takes it, on the browser's own clock (its time zone)."""
    shown: str = page.evaluate(
        """(iso) => { const d = new Date(iso), p = (n) => String(n).padStart(2, "0");
            return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}`
                + `T${p(d.getHours())}:${p(d.getMinutes())}`; }""",
        moment.isoformat(),
    )
    return shown


def submit_correct(page: Page, submit: str, full: str) -> None:
    """Submit a correct 204 on its page and wait for the full score."""
    page.goto("/problems/204")
    ready(page)
    set_code(page, CORRECT)
    page.get_by_role("button", name=submit).click()
    expect(page.get_by_test_id("summary-score")).to_contain_text(full, timeout=JUDGED_S)


def join(page: Page, code: str, label: str, button: str) -> None:
    page.goto("/classes")
    ready(page)
    page.get_by_label(label).fill(code)
    page.get_by_role("button", name=button, exact=True).click()
    page.wait_for_url("**/classes/*")
    ready(page)


def test_a_course_with_a_deadline_a_late_learner_a_gradebook_and_a_reset_link(
    browser: Browser, site: Site
) -> None:
    errors: list[str] = []
    teacher, early, late = unique_name("teacher"), unique_name("early"), unique_name("late")
    admin_via_cli(site, teacher, role="instructor")

    # The instructor: a class, and an assignment of 204 due at the start of a minute at least
    # 40 s away (the form takes minutes, on the reader's clock).
    desk = context(browser, site, "desktop")
    page = desk.new_page()
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto("/login")
    log_in_via_ui(page, teacher)
    page.wait_for_url("**/problems")
    page.goto("/classes")
    ready(page)
    page.get_by_label("新班级").fill("春季班")
    page.get_by_role("button", name="创建").click()
    page.wait_for_url("**/classes/*")
    ready(page)
    class_url = page.url
    class_id = class_url.rstrip("/").rsplit("/", 1)[1]
    code = page.get_by_test_id("join-code").inner_text().strip()
    now = datetime.now().astimezone()
    due = (now + timedelta(seconds=100)).replace(second=0, microsecond=0)
    if (due - now).total_seconds() < 40:
        due += timedelta(minutes=1)
    form = page.get_by_test_id("assignment-form")
    form.get_by_label("标题").fill("第一周：RMSNorm")
    form.get_by_label("题目（按顺序写题号，用逗号或空格分隔）").fill("204")
    form.get_by_label("开放时间").fill(on_readers_clock(page, due - timedelta(hours=1)))
    form.get_by_label("截止时间").fill(on_readers_clock(page, due))
    form.get_by_test_id("save-assignment").click()
    expect(page.get_by_test_id("class-message")).to_contain_text("作业已创建")
    ready(page)
    assignment = page.request.get(f"/api/classes/{class_id}").json()["assignments"][0]
    due_at = datetime.fromisoformat(assignment["due_at"])
    assert due_at == due, (due_at, due)

    # The early learner: a phone, in English; joins with the code and submits in time.
    phone = context(browser, site, "phone")
    mobile = phone.new_page()
    mobile.on("pageerror", lambda exc: errors.append(str(exc)))
    register_via_ui(mobile, early)
    switch_language(mobile, "en")
    join(mobile, code.lower(), "Join a class with its code", "Join")
    mobile.goto("/classes")
    ready(mobile)
    expect(mobile.get_by_test_id("due-item")).to_contain_text("第一周：RMSNorm")
    no_overflow(mobile)
    mobile.screenshot(path=site.shots / "course-run-due-phone-en.png", full_page=True)
    submit_correct(mobile, "Submit", "100 / 100")
    assert datetime.now().astimezone() < due_at, "the early learner's submission was meant to be in time"

    # The late learner: a laptop, in Chinese; joins now, submits once the due time has passed.
    lap = context(browser, site, "desktop")
    laptop = lap.new_page()
    laptop.on("pageerror", lambda exc: errors.append(str(exc)))
    register_via_ui(laptop, late)
    join(laptop, code, "用班级码加入班级", "加入")
    wait = (due_at - datetime.now().astimezone()).total_seconds() + 1
    if wait > 0:
        time.sleep(wait)
    submit_correct(laptop, "提交", "100 / 100")

    # The gradebook: in time and counted for one, late and not counted for the other.
    page.goto(f"{class_url}/assignments/{assignment['id']}/gradebook")
    ready(page)
    book = page.get_by_test_id("gradebook")
    early_row, late_row = book.locator("tr", has_text=early), book.locator("tr", has_text=late)
    expect(early_row.get_by_test_id("total")).to_have_text("100")
    expect(early_row.get_by_test_id("late")).to_have_count(0)
    expect(late_row.get_by_test_id("late")).to_contain_text("100")
    expect(late_row.get_by_test_id("total")).to_have_text("0")
    no_overflow(page)
    page.screenshot(path=site.shots / "course-run-gradebook-zh.png", full_page=True)
    with page.expect_download() as download_info:
        page.get_by_test_id("gradebook-csv").click()
    raw = download_info.value.path().read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf"), "the CSV starts with a BOM"
    rows = list(csv.reader(io.StringIO(raw.decode("utf-8-sig"))))
    header, body = rows[0], {r[0]: dict(zip(rows[0], r, strict=True)) for r in rows[1:]}
    assert set(body) == {early, late}, rows
    assert body[early]["204：截止前最高分"] == "100" and body[early]["204：计入成绩"] == "100", header
    assert body[early]["204：迟交"] == "否"
    assert body[late]["204：截止前最高分"] == "" and body[late]["204：全部最高分"] == "100"
    assert body[late]["204：迟交"] == "是" and body[late]["204：计入成绩"] == "0"
    assert body[late]["204：提交次数"] == "1"

    # The late learner forgot their password: the instructor issues a link on the class page,
    # and the learner, logged out, sets a new one with it.
    page.goto(class_url)
    ready(page)
    page.get_by_test_id("members").locator("tr", has_text=late).get_by_role("button", name="重置链接").click()
    link = page.get_by_test_id("reset-link-url")
    expect(link).to_contain_text("/reset/")
    expect(page.get_by_test_id("reset-link")).to_contain_text(late)
    page.screenshot(path=site.shots / "course-run-reset-link-zh.png", full_page=True)
    url = link.inner_text().strip()
    lap.clear_cookies()
    laptop.goto(url)
    ready(laptop)
    laptop.get_by_label("新密码", exact=True).fill(NEW_PASSWORD)
    laptop.get_by_label("再次输入新密码").fill(NEW_PASSWORD)
    laptop.get_by_role("button", name="设置密码").click()
    laptop.wait_for_url("**/settings?password=reset*")
    ready(laptop)
    expect(laptop.locator("header")).to_contain_text(late)
    old = httpx.post(f"{site.url}/api/auth/login", json={"username": late, "password": PASSWORD})
    new = httpx.post(f"{site.url}/api/auth/login", json={"username": late, "password": NEW_PASSWORD})
    assert (old.status_code, new.status_code) == (401, 200), (old.text, new.text)
    for opened in (desk, phone, lap):
        opened.close()
    assert not errors, errors
