"""What learners expect and used not to find (issue 31, item 8), in a real Chromium: a pointer to
the course's first problem on a first visit, the shortcuts list on "?", a copy button and a diff
between two of one's submissions on a submission's page, and the celebration when the capstone is
accepted; at 1366x900, 768 px and a 390x844 phone, in both languages. Two judgements in all.
Screenshots land in JUDGE_SCREENSHOT_DIR as in test_browser.py."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from tests.web.factories import read_204, unique_name
from tests.web.pages.sizes import SIZES
from tests.web.pages.test_browser import (
    Site,
    expect_console_errors,
    ready,
    register_via_ui,
    serving_site,
    submitted,
    switch_language,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CORRECT = read_204("solutions/accepted/div_sqrt_sum.py")
WRONG = read_204("solutions/wrong/weight_not_plus_one.py")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    with serving_site(tmp_path_factory, JUDGE_WORKERS="1") as s:
        yield s


def test_a_first_visit_is_pointed_at_the_first_problem(page: Page, site: Site) -> None:
    for lang in ("zh", "en"):
        for size_name, size in SIZES.items():
            page.set_viewport_size(size)
            page.goto("/problems")
            ready(page)
            if lang == "en" and page.locator("html").get_attribute("lang") != "en":
                switch_language(page)
            link = page.get_by_test_id("start-here-link")
            expect(link).to_have_attribute("href", "/problems/201")  # course.toml's first chapter
            box = page.get_by_test_id("start-here").bounding_box()
            assert box is not None and box["x"] + box["width"] <= size["width"] + 1
            page.screenshot(path=site.shots / f"extras-start-here-{lang}-{size_name}.png")
    # Once something was tried, the pointer goes.
    switch_language(page)  # back to Chinese, as register_via_ui reads it
    register_via_ui(page, unique_name("started"))
    submitted(page, "204", WRONG)
    page.goto("/problems")
    ready(page)
    expect(page.get_by_test_id("start-here")).to_have_count(0)


def test_shortcuts_copy_and_a_diff_of_two_submissions(page: Page, site: Site) -> None:
    register_via_ui(page, unique_name("differ"))
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    first = submitted(page, "204", WRONG)["id"]
    second = submitted(page, "204", CORRECT)["id"]

    page.goto("/problems/204")
    ready(page)
    page.locator("#problem-title").click()  # outside the editor: "?" is the shortcut, not a character
    page.keyboard.press("?")
    dialog = page.get_by_test_id("shortcuts")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("Ctrl+Shift+Enter")
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()

    for lang in ("zh", "en"):
        if lang == "en":
            switch_language(page)
        for size_name, size in SIZES.items():
            page.set_viewport_size(size)
            page.goto(f"/submissions/{second}")
            ready(page)
            copy = page.get_by_test_id("code-copy")
            copy.click()
            expect(copy).to_have_text("已复制" if lang == "zh" else "Copied")
            assert page.evaluate("() => navigator.clipboard.readText()") == CORRECT
            page.get_by_test_id("compare-with").select_option(str(first))
            diff = page.get_by_test_id("code-diff")
            expect(diff).to_be_visible()
            # The wrong solution's lines are "-" (older), the accepted one's "+" (newer).
            removed = [line[2:] for line in diff.inner_text().splitlines() if line.startswith("- ")]
            added = [line[2:] for line in diff.inner_text().splitlines() if line.startswith("+ ")]
            assert removed and added and all(line in WRONG for line in removed)
            assert all(line in CORRECT for line in added)
            page.get_by_test_id("code-diff").scroll_into_view_if_needed()
            page.screenshot(path=site.shots / f"extras-diff-{lang}-{size_name}.png")


def test_the_capstone_celebrates_its_first_accepted_submit(page: Page, site: Site) -> None:
    """The page's reaction to a judged result (judge:done); judging 217 from a learner's own
    eleven parts would take this test a dozen judgements. 204 is no capstone: nothing there."""
    register_via_ui(page, unique_name("modeller"))
    # The page's other listeners take the event for real and ask for the solutions, which a
    # learner who was never accepted may not read: those refusals are this test's doing.
    expect_console_errors(page, "403 (Forbidden)")
    for problem, celebrates in (("204", False), ("217", True)):
        page.goto(f"/problems/{problem}")
        ready(page)
        page.evaluate(
            """() => document.dispatchEvent(new CustomEvent("judge:done",
                 { detail: { mode: "submit", verdict: "AC", id: 1 } }))"""
        )
        expect(page.get_by_test_id("celebration")).to_have_count(1 if celebrates else 0)
    expect(page.get_by_test_id("celebration")).to_contain_text("你的模型完成了")
    page.screenshot(path=site.shots / "extras-celebration-zh-desktop.png")
