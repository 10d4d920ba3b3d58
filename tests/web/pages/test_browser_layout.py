"""The problem page's layout in a real Chromium (issue 31, items 2 and 6): splitters moved with
a mouse, a finger and the keyboard and remembered; a wrong answer opens on its first failing
case with its message, diagnosis and hint in view at 1366x900; error maps sized to their data;
Statement | Code | Results views at 768 px with a badge for a new result; My submissions and
the leaderboard as cards and a two-line header on a 390x844 phone; case names that wrap only
after "_". Both languages.

Two judgements in all (a Run of a wrong answer, a Submit of the accepted one): the CI budget is
tight. Screenshots land in JUDGE_SCREENSHOT_DIR as in test_browser.py.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import FloatRect, Locator, Page, expect

from tests.web.factories import read_204, unique_name
from tests.web.pages.sizes import SIZES
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

DESKTOP, TABLET, PHONE = SIZES["desktop"], SIZES["tablet"], SIZES["phone"]
WRONG = read_204("solutions/wrong/weight_not_plus_one.py")
CORRECT = read_204("solutions/accepted/div_sqrt_sum.py")
HEADER_MAX_PX = 72  # two short lines: the brand and account, then the navigation
CELL_MAX_PX = 24.5  # an error map's cell: 1.5rem at most


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    with serving_site(tmp_path_factory, JUDGE_WORKERS="2") as s:
        yield s


def box(locator: Locator) -> FloatRect:
    found = locator.bounding_box()
    assert found is not None, locator
    return found


def within(inner: FloatRect, outer: FloatRect, slack: float = 1.0) -> bool:
    """`inner` lies inside `outer` from top to bottom."""
    top, bottom = outer["y"] - slack, outer["y"] + outer["height"] + slack
    return inner["y"] >= top and inner["y"] + inner["height"] <= bottom


def drag(page: Page, handle: Locator, dx: float, dy: float) -> None:
    """A mouse drag from the handle's middle, in a few moves as a hand does it."""
    start = box(handle)
    x, y = start["x"] + start["width"] / 2, start["y"] + start["height"] / 2
    page.mouse.move(x, y)
    page.mouse.down()
    page.mouse.move(x + dx, y + dy, steps=6)
    page.mouse.up()


def touch_drag(page: Page, handle: Locator, dx: float, dy: float) -> None:
    """A finger's drag: real touch events from Chromium's input layer (DevTools protocol)."""
    start = box(handle)
    x, y = start["x"] + start["width"] / 2, start["y"] + start["height"] / 2
    cdp = page.context.new_cdp_session(page)
    try:
        cdp.send("Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": [{"x": x, "y": y}]})
        for step in range(1, 7):
            point = {"x": x + dx * step / 6, "y": y + dy * step / 6}
            cdp.send("Input.dispatchTouchEvent", {"type": "touchMove", "touchPoints": [point]})
        cdp.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})
    finally:
        cdp.detach()


def names_broken_mid_word(page: Page) -> list[str]:
    """Case names whose text wraps anywhere but after "_", ".", "/" (or a space)."""
    broken: list[str] = page.evaluate(
        """() => {
          const bad = [];
          for (const th of document.querySelectorAll('tr.case > th[scope=row]')) {
            if (th.offsetParent === null) continue;
            const walker = document.createTreeWalker(th, NodeFilter.SHOW_TEXT);
            let top = null, last = '';
            for (let node = walker.nextNode(); node; node = walker.nextNode()) {
              if (node.parentElement.closest('.tag')) continue;
              for (let i = 0; i < node.data.length; i++) {
                const range = document.createRange();
                range.setStart(node, i);
                range.setEnd(node, i + 1);
                const rect = range.getClientRects()[0];
                if (!rect) continue;
                if (top !== null && rect.top > top + 2 && !/[_./\\s]/.test(last)) bad.push(th.textContent);
                top = rect.top;
                last = node.data[i];
              }
            }
          }
          return bad;
        }"""
    )
    return broken


def overflow_right(page: Page, selector: str) -> float:
    """How far the page, or any of these elements, reaches past the screen's right edge."""
    found: float = page.evaluate(
        """(selector) => Math.max(document.documentElement.scrollWidth - window.innerWidth,
            ...[...document.querySelectorAll(selector)]
                .map(el => el.getBoundingClientRect().right - window.innerWidth))""",
        selector,
    )
    return found


def header_height(page: Page) -> float:
    return box(page.locator(".site-header"))["height"]


# Two error maps drawn as results.js draws them (a grid of cells, its columns inline): a 3x2 map
# and a 64x64 one, in the dock beside the real results.
SAMPLE_MAPS = """() => {
  const figure = (rows, cols) => {
    const grid = document.createElement('div');
    grid.className = 'error-map-grid';
    grid.style.gridTemplateColumns = `repeat(${cols}, minmax(4px, 1fr))`;
    for (let i = 0; i < rows * cols; i++) {
      const cell = document.createElement('span');
      cell.className = 'error-map-cell';
      cell.style.background = i % 3 ? 'transparent' : 'rgba(200, 30, 30, 0.8)';
      grid.append(cell);
    }
    const fig = document.createElement('figure');
    fig.className = 'error-map sample-map';
    fig.dataset.size = `${rows}x${cols}`;
    fig.append(grid);
    return fig;
  };
  const results = document.getElementById('results');
  results.append(figure(3, 2), figure(64, 64));
}"""


def test_a_wrong_answer_fits_the_dock_and_the_splits_are_remembered(page: Page, site: Site) -> None:
    register_via_ui(page, unique_name("layout"))
    page.goto("/problems/204")
    ready(page)
    columns, rows = page.get_by_test_id("split-columns"), page.get_by_test_id("split-dock")
    expect(page.get_by_role("separator")).to_have_count(2)
    expect(columns).to_have_attribute("aria-valuenow", "50")
    expect(rows).to_have_attribute("aria-valuenow", "55")
    expect(page.locator("[data-narrow-tabs]")).to_be_hidden()  # a laptop shows all three

    set_code(page, WRONG)
    page.get_by_role("button", name="运行").click()
    expect(page.get_by_test_id("summary")).to_contain_text("答案错误", timeout=JUDGED_S)
    panel = page.locator("#panel-results")
    first = page.locator("tr.case:not(.v-AC)").first
    detail = first.locator("xpath=following-sibling::tr[1]")
    expect(detail).to_have_class("case-detail")
    # The first failing case: its row, message, diagnosis and hint all inside the dock's view.
    page.wait_for_timeout(200)  # the reveal runs on the next frame
    view = box(panel)
    for part in (
        first,
        detail.get_by_test_id("case-message"),
        detail.get_by_test_id("case-diagnoses"),
        detail.get_by_test_id("case-hint"),
    ):
        expect(part).to_be_visible()
        assert within(box(part), view), (part, box(part), view)
    assert page.evaluate("() => window.scrollY") == 0
    # Its error map: cells of at most 1.5rem, the map inside the dock's width.
    emap = detail.get_by_test_id("error-map").locator(".error-map-grid")
    if emap.count():
        cell = box(emap.locator(".error-map-cell").first)
        assert cell["width"] <= CELL_MAX_PX and cell["height"] <= CELL_MAX_PX, cell
        assert box(emap)["x"] + box(emap)["width"] <= view["x"] + view["width"]
    page.screenshot(path=site.shots / "layout-wrong-answer-zh.png")

    # Maps sized to their data: a 3x2 one is small, a 64x64 one fits the dock.
    page.evaluate(SAMPLE_MAPS)
    small = box(page.locator(".sample-map[data-size='3x2'] .error-map-grid"))
    large = box(page.locator(".sample-map[data-size='64x64'] .error-map-grid"))
    assert small["width"] <= 2 * CELL_MAX_PX + 4 and small["height"] <= 3 * CELL_MAX_PX + 5, small
    assert large["width"] <= view["width"] and large["height"] <= 14 * 16 + 40, large
    page.locator(".sample-map[data-size='64x64']").scroll_into_view_if_needed()
    page.screenshot(path=site.shots / "layout-error-maps-zh.png")
    page.evaluate("() => document.querySelectorAll('.sample-map').forEach(el => el.remove())")

    # The mouse drags the dock 150 px taller; a finger then 60 px shorter; the keyboard widens the
    # statement. A reload keeps all three.
    dock = page.get_by_test_id("results-dock")
    before = box(dock)["height"]
    drag(page, rows, 0, -150)
    dragged = box(dock)["height"]
    assert abs(dragged - before - 150) <= 8, (before, dragged)
    assert int(rows.get_attribute("aria-valuenow") or 0) > 55
    touch_drag(page, rows, 0, 60)
    touched = box(dock)["height"]
    assert abs(dragged - touched - 60) <= 8, (dragged, touched)
    statement = page.locator(".statement-pane")
    narrow = box(statement)["width"]
    columns.focus()
    for _ in range(3):
        page.keyboard.press("ArrowRight")
    expect(columns).to_have_attribute("aria-valuenow", "56")
    wide = box(statement)["width"]
    assert wide > narrow + 40, (narrow, wide)
    page.screenshot(path=site.shots / "layout-resized-zh.png")
    page.reload()
    ready(page)
    assert abs(box(dock)["height"] - touched) <= 3 and abs(box(statement)["width"] - wide) <= 3
    expect(columns).to_have_attribute("aria-valuenow", "56")

    # In English, the same result from the history opens on the same case, in the kept layout.
    switch_language(page)
    assert abs(box(dock)["height"] - touched) <= 3
    page.get_by_role("tab", name="My submissions").click()
    page.get_by_test_id("history").locator("button.history-item").first.click()
    expect(page.get_by_test_id("summary")).to_contain_text("Wrong answer")
    page.wait_for_timeout(200)
    view = box(panel)
    for part in (first, detail.get_by_test_id("case-message"), detail.get_by_test_id("case-hint")):
        assert within(box(part), view), (part, box(part), view)
    assert names_broken_mid_word(page) == []
    page.screenshot(path=site.shots / "layout-wrong-answer-en.png")
    # A double-click puts a splitter back where it started.
    rows.dblclick()
    expect(rows).to_have_attribute("aria-valuenow", "55")


def test_narrow_views_cards_and_a_short_header(page: Page, site: Site) -> None:
    page.set_viewport_size(TABLET)
    register_via_ui(page, unique_name("layout"))
    page.goto("/problems/204")
    ready(page)
    tabs = page.locator("[data-narrow-tabs] [role=tab]")
    expect(tabs).to_have_text(["题面", "代码", "结果"])
    # The statement first, the editor one tap away (not 1,800 px below).
    expect(page.locator("#view-statement")).to_have_attribute("aria-selected", "true")
    expect(page.locator(".statement-pane")).to_be_visible()
    expect(page.locator("#editor")).to_be_hidden()
    assert box(page.locator("[data-narrow-tabs]"))["y"] < 200
    page.screenshot(path=site.shots / "layout-tablet-statement-zh.png")
    page.locator("#view-code").click()
    expect(page.locator("#editor")).to_be_visible()
    expect(page.locator(".statement-pane")).to_be_hidden()
    expect(page.get_by_test_id("results-dock")).to_be_hidden()
    assert box(page.locator("#editor"))["y"] < 300

    # Submit from the Code view: the view stays, the Results tab gets the verdict as a badge.
    set_code(page, CORRECT)
    page.get_by_role("button", name="提交").click()
    badge = page.get_by_test_id("results-tab-badge")
    expect(badge).to_have_text("AC", timeout=JUDGED_S)
    expect(page.locator("#view-code")).to_have_attribute("aria-selected", "true")
    page.screenshot(path=site.shots / "layout-tablet-badge-zh.png")
    page.locator("#view-results").click()
    expect(badge).to_be_hidden()
    expect(page.get_by_test_id("summary-score")).to_contain_text("100 / 100")
    assert names_broken_mid_word(page) == []
    page.screenshot(path=site.shots / "layout-tablet-results-zh.png")
    # "Back to the code" is the Code view.
    page.get_by_role("button", name="回到代码").click()
    expect(page.locator("#view-code")).to_have_attribute("aria-selected", "true")
    expect(page.locator("#editor")).to_be_visible()

    # The choice lasts while on the page, a language switch included; arrow keys move along.
    page.locator("#view-results").click()
    switch_language(page)
    expect(tabs).to_have_text(["Statement", "Code", "Results"])
    expect(page.locator("#view-results")).to_have_attribute("aria-selected", "true")
    page.locator("#view-results").focus()
    page.keyboard.press("ArrowLeft")
    expect(page.locator("#view-code")).to_have_attribute("aria-selected", "true")
    expect(page.locator("#view-code")).to_be_focused()
    page.keyboard.press("ArrowLeft")
    expect(page.locator(".statement-pane")).to_be_visible()
    page.screenshot(path=site.shots / "layout-tablet-statement-en.png")
    assert header_height(page) <= HEADER_MAX_PX

    # A phone: My submissions and the leaderboard as cards inside the screen, in both languages,
    # under a header of two short lines.
    page.set_viewport_size(PHONE)
    for lang in ("en", "zh"):
        page.goto("/submissions")
        ready(page)
        cards = page.get_by_test_id("submission-table").locator("tbody tr")
        expect(cards).to_have_count(1)
        expect(cards.first.locator(".col-score")).to_be_visible()
        assert overflow_right(page, "table.cards td, table.cards a") <= 0
        assert header_height(page) <= HEADER_MAX_PX, (lang, header_height(page))
        assert overflow_right(page, ".site-header nav a") <= 0, f"a link of the {lang} navigation is cut off"
        page.screenshot(path=site.shots / f"layout-phone-submissions-{lang}.png")
        page.goto("/leaderboard")
        ready(page)
        mine = page.locator("tr.me")
        expect(mine.locator(".col-score")).to_contain_text("100")
        assert overflow_right(page, "table.cards td") <= 0
        assert header_height(page) <= HEADER_MAX_PX, (lang, header_height(page))
        page.screenshot(path=site.shots / f"layout-phone-leaderboard-{lang}.png")
        if lang == "en":
            switch_language(page)

    # On the phone's one column, the results' case names wrap after "_" only.
    page.goto("/problems/204")
    ready(page)
    page.get_by_role("tab", name="我的提交").click()
    page.get_by_test_id("history").locator("button.history-item").first.click()
    expect(page.get_by_test_id("summary-score")).to_contain_text("100 / 100")
    assert names_broken_mid_word(page) == []
    assert overflow_right(page, "tr.case th, tr.case td") <= 0
    page.locator("tr.case").nth(8).scroll_into_view_if_needed()
    page.screenshot(path=site.shots / "layout-phone-case-names-zh.png")


def test_a_visitors_header_is_short_in_both_languages(page: Page, site: Site) -> None:
    page.set_viewport_size(PHONE)
    page.goto("/problems")
    ready(page)
    zh = header_height(page)
    switch_language(page)
    en = header_height(page)
    assert zh <= HEADER_MAX_PX and en <= HEADER_MAX_PX, (zh, en)
    assert en <= zh + 2, (zh, en)
    page.screenshot(path=site.shots / "layout-phone-header-en.png")
