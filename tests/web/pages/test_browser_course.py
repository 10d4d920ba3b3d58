"""Following the course in a real Chromium: the problem list as the course map with the
learner's progress per chapter, a problem's chapter and prerequisites, the "next problem"
button after an accepted Submit, and the list on a phone, in Chinese and in English.

One `judge serve` for the module, on the local backend (the sandbox is not what this tests),
and one judgement: a correct Submit of 204. Screenshots land in JUDGE_SCREENSHOT_DIR as
course-*.png.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, ViewportSize, expect

from tests.web.factories import read_204, unique_name
from tests.web.pages.test_browser import (
    JUDGED_S,
    Site,
    ready,
    register_via_ui,
    serving_site,
    set_code,
    switch_language,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CORRECT = read_204("solutions/accepted/div_sqrt_sum.py")
COURSE_CHAPTERS = ["1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12"]
PHONE: ViewportSize = {"width": 390, "height": 844}


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    with serving_site(tmp_path_factory, JUDGE_BACKEND="local", JUDGE_WORKERS="1") as s:
        yield s


@pytest.fixture(scope="module")
def solved_204(browser: Browser, site: Site) -> Iterator[BrowserContext]:
    """A learner who registered and got 204 accepted through the page; their browser profile.
    The test that does it checks the button; the others reuse the account."""
    context = browser.new_context(base_url=site.url, viewport={"width": 1366, "height": 900})
    yield context
    context.close()


def test_after_an_accepted_submit_the_next_problem_is_offered(solved_204: BrowserContext, site: Site) -> None:
    page = solved_204.new_page()
    register_via_ui(page, unique_name("course"))
    page.goto("/problems/204")
    ready(page)
    links = page.get_by_test_id("course-links")
    expect(links.get_by_test_id("chapter-link")).to_have_text("03 · RMSNorm")
    expect(links.get_by_test_id("chapter-link")).to_have_attribute("href", "/problems#chapter-3")
    expect(page.get_by_test_id("next-quiet")).to_have_count(0)  # not solved yet
    expect(page.get_by_test_id("next-problem")).to_have_count(0)

    set_code(page, CORRECT)
    page.locator("#submit").click()
    button = page.get_by_test_id("after-verdict").get_by_test_id("next-problem")
    expect(button).to_be_visible(timeout=JUDGED_S)
    expect(button).to_have_text("下一题：205 · 旋转位置编码 RoPE →")
    page.screenshot(path=site.shots / "course-next-zh.png")
    button.click()
    page.wait_for_url("**/problems/205")
    ready(page)
    # Once solved, the next problem stays on the page, quietly, in the problem head.
    page.goto("/problems/204")
    ready(page)
    expect(page.get_by_test_id("next-quiet").locator("a")).to_have_attribute("href", "/problems/205")
    page.close()


def test_a_problem_shows_its_prerequisites_with_the_learner_s_state(
    solved_204: BrowserContext, site: Site
) -> None:
    page = solved_204.new_page()
    page.goto("/problems/209")
    ready(page)
    links = page.get_by_test_id("course-links")
    expect(links.get_by_test_id("chapter-link")).to_have_text("06 · 注意力")
    items = links.locator("li[data-prerequisite]")
    assert [items.nth(i).get_attribute("data-prerequisite") for i in range(items.count())] == [
        "204",
        "205",
        "208",
    ]
    expect(links.locator("li[data-prerequisite='204']")).to_have_attribute("data-state", "solved")
    expect(links.locator("li[data-prerequisite='205']")).to_have_attribute("data-state", "open")
    expect(links.locator("li[data-prerequisite='205']")).to_contain_text("尚未解决")
    page.screenshot(path=site.shots / "course-links-zh.png")
    switch_language(page, "en")
    try:
        expect(links.get_by_test_id("chapter-link")).to_have_text("06 · Attention")
        expect(links.locator("li[data-prerequisite='205']")).to_contain_text("not solved yet")
        assert "注意力" not in links.inner_text()
        page.screenshot(path=site.shots / "course-links-en.png")
        # The chapter link lands on that chapter of the course map.
        links.get_by_test_id("chapter-link").click()
        page.wait_for_url("**/problems#chapter-6")
        expect(page.locator("#chapter-6")).to_be_in_viewport()
    finally:
        switch_language(page, "zh")
        page.close()


def test_the_list_is_the_course_map_with_progress_per_chapter(solved_204: BrowserContext, site: Site) -> None:
    page = solved_204.new_page()
    page.goto("/problems")
    ready(page)
    table = page.get_by_test_id("problem-table")
    chapters = table.get_by_test_id("chapter")
    assert [chapters.nth(i).get_attribute("data-chapter") for i in range(chapters.count())] == COURSE_CHAPTERS
    rmsnorm = table.locator("tbody[data-chapter='3']")
    expect(rmsnorm.get_by_test_id("chapter-progress")).to_have_text("已解决 1 / 1")
    expect(table.locator("tbody[data-chapter='2']").get_by_test_id("chapter-progress")).to_have_text(
        "已解决 0 / 2"
    )
    # One submitter is too few for a rate.
    expect(rmsnorm.locator("tr[data-problem='204']").get_by_test_id("acceptance")).to_contain_text("—")
    page.screenshot(path=site.shots / "course-map-zh.png", full_page=True)
    switch_language(page, "en")
    try:
        expect(table.locator("#chapter-6")).to_contain_text("06 · Attention")
        expect(rmsnorm.get_by_test_id("chapter-progress")).to_have_text("1 / 1 solved")
        assert "注意力" not in table.inner_text()
        page.screenshot(path=site.shots / "course-map-en.png", full_page=True)
    finally:
        switch_language(page, "zh")
        page.close()


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_on_a_phone_the_list_shows_status_and_score(browser: Browser, site: Site, lang: str) -> None:
    phone = browser.new_context(base_url=site.url, viewport=PHONE, is_mobile=True, has_touch=True)
    try:
        page: Page = phone.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        register_via_ui(page, unique_name("phone"))  # lands on /problems
        if lang == "en":
            switch_language(page, "en")
        overflow = page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0, f"the list is {overflow}px wider than a phone's screen"
        for problem_id in ("203", "204", "217"):
            row = page.locator(f"tr[data-problem='{problem_id}']")
            row.scroll_into_view_if_needed()
            for cell in (
                row.locator(".badge"),
                row.get_by_test_id("best-score"),
                row.locator(".col-title a"),
            ):
                box = cell.bounding_box()
                assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], (
                    problem_id,
                    box,
                )
                expect(cell).to_be_visible()
        page.locator("tr[data-problem='203']").scroll_into_view_if_needed()
        page.screenshot(path=site.shots / f"course-map-phone-{lang}.png")
        # A problem's course links fit the phone too.
        page.goto("/problems/209")
        ready(page)
        expect(page.get_by_test_id("chapter-link")).to_be_in_viewport()
        overflow = page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0, f"209's page is {overflow}px wider than a phone's screen"
        page.screenshot(path=site.shots / f"course-links-phone-{lang}.png")
        assert not errors, errors
    finally:
        phone.close()
