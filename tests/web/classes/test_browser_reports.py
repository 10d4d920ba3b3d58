"""A class's reports in a real Chromium: the gradebook at 1366×900 in Chinese (its CSV downloaded
and read back) and on a 390×844 phone in English (the table scrolls inside its box, the page does
not), and similar submissions (a pair side by side, another problem chosen, the phone).

One `judge serve` for the module, without workers: the class, its assignment and the judged
submissions are written into the server's database as the judge would have left them.
Screenshots land in JUDGE_SCREENSHOT_DIR as class-*.png.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest
from playwright.sync_api import Browser, Page, ViewportSize, expect
from sqlalchemy import select

from tests.web.classes.test_similarity import SOFTMAX, SOFTMAX_RENAMED
from tests.web.factories import PASSWORD, unique_name
from tests.web.pages.test_browser import (
    Site,
    expect_console_errors,
    full_page_shot,
    ready,
    serving_site,
    switch_language,
)
from web.auth.models import User
from web.classes.models import Assignment, AssignmentProblem, Extension, Group, Membership
from web.db import make_engine, make_sessionmaker, transaction
from web.scores.service import refresh_score
from web.submissions.models import Mode, Submission, SubmissionStatus

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PHONE: ViewportSize = {"width": 390, "height": 844}
DESKTOP: ViewportSize = {"width": 1366, "height": 900}
DUE = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
PROBLEMS = ("203", "204", "205", "206")


@dataclass
class Course:
    teacher: str
    learners: list[str]
    class_id: int
    assignment_id: int


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    with serving_site(tmp_path_factory, JUDGE_BACKEND="local", JUDGE_WORKERS="0") as s:
        yield s


def _register(page: Page, name: str) -> None:
    res = page.request.post("/api/auth/register", data={"username": name, "password": PASSWORD})
    assert res.status == 201, res.text()


@pytest.fixture(scope="module")
def course(site: Site, browser: Browser) -> Course:
    """A class of six learners (two with Chinese names) and an assignment of four problems due at
    DUE, one learner with an extension; judged submissions before and after the due time."""
    context = browser.new_context(base_url=site.url)
    page = context.new_page()
    teacher = unique_name("teacher")
    ascii_names = [unique_name(f"learner{i}") for i in range(6)]
    for name in [teacher, *ascii_names]:
        _register(page, name)
    context.close()
    # Chinese names (the API takes ASCII ones; the pages and the CSV must show these).
    learners = ["王小明", "李华", *ascii_names[2:]]
    engine = make_engine(site.env["JUDGE_DATABASE_URL"])
    try:
        with transaction(make_sessionmaker(engine)) as s:
            users = {u.username: u for u in s.scalars(select(User))}
            users[teacher].role = "instructor"
            for old, new in zip(ascii_names[:2], learners[:2], strict=True):
                users[old].username = new
                users[new] = users[old]
            group = Group(name="深度学习 2026 春", instructor_id=users[teacher].id, join_code="REPORTS1")
            s.add(group)
            s.flush()
            s.add_all(Membership(class_id=group.id, user_id=users[n].id) for n in learners)
            assignment = Assignment(
                class_id=group.id,
                title="第一周：归一化与注意力",
                opens_at=DUE - timedelta(days=7),
                due_at=DUE,
            )
            s.add(assignment)
            s.flush()
            s.add_all(
                AssignmentProblem(assignment_id=assignment.id, problem_id=p, position=i)
                for i, p in enumerate(PROBLEMS)
            )
            s.add(
                Extension(
                    assignment_id=assignment.id,
                    user_id=users[learners[2]].id,
                    due_at=DUE + timedelta(hours=3),
                )
            )
            hour = timedelta(hours=1)

            def judged(name: str, problem: str, at: datetime, score: int, code: str = "# code\n") -> None:
                s.add(
                    Submission(
                        user_id=users[name].id,
                        problem_id=problem,
                        mode=Mode.SUBMIT,
                        code=code,
                        status=SubmissionStatus.DONE,
                        verdict="AC" if score == 100 else "WA",
                        score=score,
                        max_score=100,
                        created_at=at,
                    )
                )

            # 王小明: 204 in time, 203 late; 李华: 204 late; the extended learner: 204 in time
            # thanks to the extension; two learners hand in the same softmax under other names.
            judged(learners[0], "204", DUE - 2 * hour, 100)
            judged(learners[0], "203", DUE - hour, 40)
            judged(learners[0], "203", DUE + hour, 100)
            judged(learners[1], "204", DUE + 2 * hour, 100)
            judged(learners[2], "204", DUE + 2 * hour, 100)
            judged(learners[3], "205", DUE - 5 * hour, 100, SOFTMAX)
            judged(learners[4], "205", DUE - 4 * hour, 100, SOFTMAX_RENAMED)
            judged(learners[5], "206", DUE - 3 * hour, 70)
            s.flush()
            for name in learners:
                for problem in PROBLEMS:
                    refresh_score(s, users[name].id, problem)
            # The class leaderboard shows one under a display name and leaves one out, as they chose.
            users[learners[3]].display_name = "Ada 数学"
            users[learners[5]].on_leaderboard = False
            return Course(teacher, learners, group.id, assignment.id)
    finally:
        engine.dispose()


def log_in(page: Page, name: str) -> None:
    res = page.request.post("/api/auth/login", data={"username": name, "password": PASSWORD})
    assert res.status == 200, res.text()


def page_overflow(page: Page) -> int:
    overflow: int = page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")
    return overflow


def test_the_gradebook_in_chinese_on_a_laptop_and_its_csv(page: Page, site: Site, course: Course) -> None:
    page.set_viewport_size(DESKTOP)
    log_in(page, course.teacher)
    page.goto(f"/classes/{course.class_id}/assignments/{course.assignment_id}/gradebook")
    ready(page)
    switch_language(page, "zh")
    table = page.get_by_test_id("gradebook")
    expect(table).to_be_visible()
    expect(page.locator("h1")).to_contain_text("成绩册")
    expect(table.locator("tbody tr")).to_have_count(6)
    # Late cells are marked in words: 王小明's 203 and 李华's 204 (the extension makes the third
    # learner's 204 in time).
    late = table.locator("[data-testid=late]")
    expect(late).to_have_count(2)
    expect(table.locator("tr[data-learner='王小明'] td[data-problem='203']")).to_have_class("grade-cell late")
    expect(table.locator("tr[data-learner='李华'] td[data-problem='204'] .grade")).to_have_text("0")
    expect(table.get_by_test_id("extended")).to_have_count(1)
    # Times in the reader's time zone: the script rewrote the server's "… UTC".
    first_time = table.locator("time").first
    expect(first_time).not_to_have_text("UTC", timeout=5000)
    assert page_overflow(page) <= 0
    full_page_shot(page, site.shots / "class-gradebook-zh.png")

    with page.expect_download() as download_info:
        page.get_by_test_id("gradebook-csv").click()
    download = download_info.value
    # The title, from the header's RFC 5987 filename* (the ASCII filename is for older clients).
    assert download.suggested_filename == "第一周：归一化与注意力.csv"
    path = download.path()
    raw = path.read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf")
    rows = list(csv.reader(io.StringIO(raw.decode("utf-8-sig"))))
    assert rows[0][0] == "用户名" and rows[0][3] == "203：截止前最高分"
    by_name = {r[0]: r for r in rows[1:]}
    assert set(by_name) == set(course.learners)
    assert by_name["王小明"][3:9][0] == "40" and by_name["王小明"][3:9][4] == "是"  # 203: 40 in time, late


def test_the_gradebook_in_english_on_a_phone_scrolls_in_its_box(
    page: Page, site: Site, course: Course
) -> None:
    log_in(page, course.teacher)
    page.set_viewport_size(PHONE)
    page.goto(f"/classes/{course.class_id}/assignments/{course.assignment_id}/gradebook")
    ready(page)
    switch_language(page, "en")
    expect(page.locator("h1")).to_contain_text("Gradebook")
    expect(page.get_by_test_id("gradebook-csv")).to_have_text("Download CSV")
    assert page_overflow(page) <= 0, "the page scrolls sideways on a phone"
    box = page.locator(".gradebook-wrap")
    widths = box.evaluate("el => [el.scrollWidth, el.clientWidth]")
    assert widths[0] > widths[1], "the table fits a phone: nothing to scroll (is it the right table?)"
    # The learner's column stays in view when the box is scrolled to its far end.
    box.evaluate("el => { el.scrollLeft = el.scrollWidth; }")
    name = page.locator("tr[data-learner='王小明'] th.col-learner")
    left = name.evaluate(
        "el => el.getBoundingClientRect().left - el.closest('.gradebook-wrap').getBoundingClientRect().left"
    )
    assert abs(left) <= 2
    page.screenshot(path=site.shots / "class-gradebook-phone-en.png")
    box.evaluate("el => { el.scrollLeft = 0; }")
    full_page_shot(page, site.shots / "class-gradebook-phone-en-full.png")


def test_similar_submissions_side_by_side(page: Page, site: Site, course: Course) -> None:
    page.set_viewport_size(DESKTOP)
    log_in(page, course.teacher)
    page.goto(f"/classes/{course.class_id}/similar?problem_id=205")
    ready(page)
    switch_language(page, "en")
    expect(page.get_by_test_id("not-a-penalty")).to_contain_text("never a penalty")
    pairs = page.get_by_test_id("similar-pair")
    expect(pairs).to_have_count(1)
    expect(pairs.first).to_contain_text("100%")
    codes = pairs.first.locator("pre.similar-code")
    expect(codes).to_have_count(2)
    boxes = [codes.nth(i).bounding_box() for i in range(2)]
    assert boxes[0] and boxes[1] and boxes[0]["y"] == boxes[1]["y"], "not side by side on a laptop"
    full_page_shot(page, site.shots / "class-similar.png")
    # Another problem, chosen from the list (the form sends itself): nobody alike there.
    page.get_by_test_id("similar-problem").select_option("204")
    page.wait_for_url("**problem_id=204")
    ready(page)
    expect(pairs).to_have_count(0)
    expect(page.get_by_test_id("similar-summary")).to_contain_text("problem: 3.")
    # On a phone the two codes are one above the other, inside the screen.
    page.set_viewport_size(PHONE)
    page.goto(f"/classes/{course.class_id}/similar?problem_id=205")
    ready(page)
    boxes = [codes.nth(i).bounding_box() for i in range(2)]
    assert boxes[0] and boxes[1] and boxes[1]["y"] > boxes[0]["y"]
    assert page_overflow(page) <= 0
    full_page_shot(page, site.shots / "class-similar-phone.png")


def test_the_class_leaderboard_on_a_phone(page: Page, site: Site, course: Course) -> None:
    log_in(page, course.learners[4])
    page.set_viewport_size(PHONE)
    page.goto(f"/classes/{course.class_id}/leaderboard")
    ready(page)
    switch_language(page, "zh")
    board = page.get_by_test_id("class-leaderboard")
    rows = board.locator("tbody tr")
    expect(rows).to_have_count(5)  # six members, one chose not to be listed
    expect(rows.first).to_contain_text("王小明")
    expect(board).to_contain_text("Ada 数学")
    expect(board).not_to_contain_text(course.learners[3])  # the display name, never the username
    expect(board.locator("tr.me")).to_contain_text(course.learners[4])
    expect(page.get_by_test_id("hidden-members")).to_contain_text("1")
    assert page_overflow(page) <= 0
    full_page_shot(page, site.shots / "class-leaderboard-phone.png")


def test_a_learner_of_the_class_cannot_open_the_gradebook(page: Page, course: Course) -> None:
    log_in(page, course.learners[3])
    expect_console_errors(page, "404")  # the browser logs the page's own status
    res = page.goto(f"/classes/{course.class_id}/assignments/{course.assignment_id}/gradebook")
    assert res is not None and res.status == 404
