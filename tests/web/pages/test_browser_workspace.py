"""The problem page as a workspace, in a real Chromium: results beside the code (1366x900) and
in view after Run on a phone (390x844), drafts that belong to one account and leave at
log-out, a status badge that follows the verdict, a time-out that shows its time, the
elapsed time while judging, short labels that never break a character per line (issue 20).

Three judgements in all (a Run and a Submit of the accepted solution, a Run that times out):
the CI budget is tight. Screenshots land in JUDGE_SCREENSHOT_DIR as in test_browser.py.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Locator, Page, ViewportSize, expect

from judge.authoring.package import Problem
from judge.authoring.starters import in_language
from tests.web.factories import PKG_204, read_204, unique_name
from tests.web.pages.test_browser import (
    JUDGED_S,
    Site,
    editor_text,
    log_in_via_ui,
    ready,
    register_via_ui,
    serving_site,
    set_code,
    show_view,
    switch_language,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

DESKTOP: ViewportSize = {"width": 1366, "height": 900}
PHONE: ViewportSize = {"width": 390, "height": 844}
CORRECT = read_204("solutions/accepted/div_sqrt_sum.py")
STARTER = in_language(read_204("starter.py"), "zh")  # the Chinese page's starter (issue 31)
LIMIT_S = Problem(PKG_204).spec.limits.time_s
# 204's accepted RMSNorm, stuck in its forward pass: the run is stopped at the time limit.
SLEEPER = CORRECT.replace(
    "    def forward(self, x):\n", '    def forward(self, x):\n        __import__("time").sleep(600)\n', 1
)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    with serving_site(tmp_path_factory, JUDGE_WORKERS="2") as s:
        yield s


def in_viewport(page: Page, locator: Locator) -> bool:
    """Some of the element is on screen (its box overlaps the viewport, vertically and across)."""
    box = locator.bounding_box()
    size = page.viewport_size
    assert box is not None and size is not None
    return box["y"] < size["height"] and box["y"] + box["height"] > 0 and box["x"] < size["width"]


def assert_labels_on_one_line(page: Page) -> None:
    """Badges, difficulty, tags and verdict words: never one character per line."""
    broken = page.evaluate(
        """() => [...document.querySelectorAll('.badge, .difficulty, .tag, .verdict-text, [role=tab]')]
            .filter(el => el.offsetParent !== null)
            .filter(el => {
                const cs = getComputedStyle(el);
                const px = (v) => parseFloat(v) || 0;
                const text = el.getBoundingClientRect().height - px(cs.paddingTop) - px(cs.paddingBottom)
                    - px(cs.borderTopWidth) - px(cs.borderBottomWidth);
                const line = px(cs.lineHeight) || px(cs.fontSize) * 1.6;
                return text > line * 1.5;  // more than one line of text
            })
            .map(el => el.textContent.trim())"""
    )
    assert broken == [], f"these labels wrap: {broken}"


def seconds(text: str) -> float:
    found = re.search(r"(\d+(?:\.\d+)?) s\b", text)
    assert found, text
    return float(found.group(1))


def test_results_beside_the_code_and_a_live_badge(page: Page, site: Site) -> None:
    register_via_ui(page, unique_name("learner"))
    page.goto("/problems/204")
    ready(page)
    expect(page.get_by_test_id("problem-status")).to_have_text("未开始")
    assert_labels_on_one_line(page)
    title = page.locator("#problem-title")

    set_code(page, CORRECT)
    page.get_by_role("button", name="运行").click()
    expect(page.get_by_test_id("summary")).to_be_visible(timeout=JUDGED_S)
    expect(page.get_by_test_id("summary-score")).to_contain_text("6 个公开用例通过 6 个")
    # The statement's heading and the verdict are on screen together; nothing scrolled the page.
    assert in_viewport(page, title) and in_viewport(page, page.get_by_test_id("summary"))
    assert page.evaluate("() => window.scrollY") == 0
    page.screenshot(path=site.shots / "workspace-run-zh.png")
    # The cases scroll inside the dock: the last one is reachable without moving the statement.
    last = page.locator("tr.case").last
    last.scroll_into_view_if_needed()
    assert in_viewport(page, last) and in_viewport(page, title)
    # The dock is under the editor, in the right column, and reaches the bottom of the window.
    dock = page.get_by_test_id("results-dock").bounding_box()
    editor = page.locator("#editor").bounding_box()
    assert dock is not None and editor is not None
    assert dock["y"] >= editor["y"] + editor["height"] - 1 and dock["x"] > DESKTOP["width"] / 3
    assert dock["y"] + dock["height"] > DESKTOP["height"] * 0.85
    expect(page.get_by_test_id("problem-status")).to_have_text("尝试过")  # live, after a Run
    assert_labels_on_one_line(page)

    # From the dock's other tab (the scratch cell), Submit brings the dock back to its results.
    other_tabs = page.locator(".dock-tabs [role=tab]:not(#tab-results)")
    if other_tabs.count():
        other_tabs.first.click()
        expect(page.locator("#panel-results")).to_be_hidden()
    page.get_by_role("button", name="提交").click()
    expect(page.get_by_test_id("summary-score")).to_contain_text("100 / 100", timeout=JUDGED_S)
    expect(page.locator("#tab-results")).to_have_attribute("aria-selected", "true")
    # The header follows the verdict without a reload.
    expect(page.get_by_test_id("problem-status")).to_have_text("已通过")
    expect(page.get_by_test_id("problem-best")).to_have_text("100")
    assert in_viewport(page, title)

    # The Run in the history reads "not scored", never a score; the Submit has its score.
    page.get_by_role("tab", name="我的提交").click()
    items = page.get_by_test_id("history").locator("button.history-item")
    expect(items).to_have_count(2)
    run_item = items.filter(has_text="运行")
    expect(run_item).to_contain_text("不计分")
    expect(run_item).not_to_contain_text(" / ")
    expect(items.filter(has_text="提交")).to_contain_text("100 / 100")
    page.goto("/submissions")
    ready(page)
    run_row = page.get_by_test_id("submission-table").locator("tr").filter(has_text="运行")
    expect(run_row).to_contain_text("不计分")
    expect(run_row.locator("td.num")).not_to_contain_text("/")

    # On a phone, a past submission opened from the history is scrolled into view.
    page.set_viewport_size(PHONE)
    page.goto("/problems/204")
    ready(page)
    assert_labels_on_one_line(page)
    page.get_by_role("tab", name="我的提交").click()
    items.filter(has_text="运行").click()
    summary = page.get_by_test_id("summary")
    expect(summary).to_be_visible()
    assert in_viewport(page, summary)
    page.screenshot(path=site.shots / "workspace-history-phone-zh.png")
    # One tap goes back to the code.
    page.get_by_role("button", name="回到代码").click()
    assert in_viewport(page, page.locator("#editor"))


def test_a_time_out_shows_its_time_and_the_clock_ticks_on_a_phone(page: Page, site: Site) -> None:
    page.set_viewport_size(PHONE)
    register_via_ui(page, unique_name("learner"))
    switch_language(page, "en")
    page.goto("/problems/204")
    ready(page)
    assert_labels_on_one_line(page)
    set_code(page, SLEEPER)
    page.get_by_role("button", name="Run").click()
    # While it runs, the Results view (a phone shows one view at a time): the time ticks.
    expect(page.locator("#view-results .tab-badge")).to_be_visible()
    show_view(page, "results")
    elapsed = page.get_by_test_id("elapsed")
    expect(elapsed).to_have_text(re.compile(r"^[1-9]\d*\.\d s$"), timeout=JUDGED_S)
    first = seconds(elapsed.inner_text())
    expect(elapsed).not_to_have_text(f"{first:.1f} s")
    assert in_viewport(page, page.get_by_test_id("status"))
    page.screenshot(path=site.shots / "workspace-judging-phone-en.png")

    summary = page.get_by_test_id("summary")
    expect(summary).to_contain_text("Time limit exceeded", timeout=JUDGED_S)
    assert in_viewport(page, summary)
    # The case that ran out of time shows about the limit, and so does the total.
    stopped = page.locator("tr.case.v-TLE").first.locator("td.num").last
    assert LIMIT_S * 0.8 <= seconds(stopped.inner_text()) <= LIMIT_S + 5
    assert seconds(summary.locator(".time").inner_text()) >= LIMIT_S * 0.8
    expect(page.get_by_test_id("summary-score")).to_contain_text("not scored")
    # Every column of the case table fits the phone: the times are not off to the right.
    right = page.evaluate(
        """() => Math.max(...[...document.querySelectorAll('tr.case td.num')]
            .map(td => td.getBoundingClientRect().right))"""
    )
    assert right <= PHONE["width"], f"the case table is {right - PHONE['width']}px too wide"
    page.screenshot(path=site.shots / "workspace-tle-phone-en.png")

    page.set_viewport_size(DESKTOP)
    assert in_viewport(page, page.locator("#problem-title")) and in_viewport(page, summary)
    assert_labels_on_one_line(page)
    page.screenshot(path=site.shots / "workspace-tle-en.png")


def test_log_out_takes_the_drafts_with_it(page: Page, site: Site) -> None:
    name = unique_name("learner")
    register_via_ui(page, name)
    # A draft kept before drafts had an owner is nobody's: it goes on the next page.
    page.evaluate(
        "() => localStorage.setItem('llm-judge:draft:204', JSON.stringify({code: '# old', synced: false}))"
    )
    page.goto("/problems/204")
    ready(page)
    assert editor_text(page) == STARTER
    assert page.evaluate("() => localStorage.getItem('llm-judge:draft:204')") is None
    mine = "# my own solution, not for the next person\n" + CORRECT
    set_code(page, mine)
    # Log out at once, before the editor's save pause: the edit still reaches the server.
    with page.expect_navigation():
        page.locator("form[action='/logout'] button").click()
    ready(page)
    assert (
        page.evaluate("() => Object.keys(localStorage).filter(k => k.startsWith('llm-judge:draft:'))") == []
    )

    # The next visitor of this browser sees the starter, and their own edits under their own key.
    page.goto("/problems/204")
    ready(page)
    assert editor_text(page) == STARTER
    page.screenshot(path=site.shots / "workspace-visitor-zh.png")
    theirs = "# a visitor's try\n" + STARTER
    set_code(page, theirs)
    expect(page.locator("#save-state")).to_have_attribute("data-state", "local", timeout=10_000)
    page.reload()
    ready(page)
    assert editor_text(page) == theirs
    keys = page.evaluate("() => Object.keys(localStorage).filter(k => k.startsWith('llm-judge:draft:'))")
    assert keys == ["llm-judge:draft:guest:204"]

    # The learner, back (in a browser of their own), finds what they typed before logging out.
    other = page.context.browser
    assert other is not None
    elsewhere_context = other.new_context(base_url=site.url)
    try:
        elsewhere = elsewhere_context.new_page()
        elsewhere.goto("/login?next=/problems/204")
        log_in_via_ui(elsewhere, name)
        elsewhere.wait_for_url("**/problems/204")
        ready(elsewhere)
        assert editor_text(elsewhere) == mine
    finally:
        elsewhere_context.close()
