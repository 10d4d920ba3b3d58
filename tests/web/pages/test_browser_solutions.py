"""The Solutions tab in a real Chromium: locked (and the API says 403) until the learner's own
accepted Submit of 204; then it opens live, shows the reference and every accepted formulation
with its note in the page's language only, and the learner's time beside the reference's.
Same real `judge serve` and backend as test_browser.py; screenshots land in the same place.
"""

from __future__ import annotations

import re
import tomllib

import pytest
from playwright.sync_api import Page, expect

from tests.web.factories import PKG_204, unique_name
from tests.web.pages import test_browser as shared
from tests.web.pages.test_browser import (
    CORRECT,
    JUDGED_S,
    Site,
    ready,
    register_via_ui,
    set_code,
    switch_language,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

# test_browser.py's server settings, in a server of this module's own (browser and page: conftest).
site = shared.site

NOTES = tomllib.loads((PKG_204 / "solutions" / "notes.toml").read_text(encoding="utf-8"))
ACCEPTED = sorted(p.stem for p in (PKG_204 / "solutions" / "accepted").glob("*.py"))
HAN = re.compile(r"[\u4e00-\u9fff]")
# "你的代码 12 ms · 参考实现 8.0 ms (1.5×)": a time each, and their ratio.
# One speed figure (issue 31): the totals, then the typical case's ratio, said once.
TIMING = r"{yours}共? [0-9.]+ ms · {reference}共? [0-9.]+ ms( in all)? · .*[0-9.]+(×| 倍)"


def plain(note: str) -> str:
    """A note as the page shows it: its `code` spans set as code, without the backticks."""
    return note.replace("`", "")


def notes_shown(page: Page, lang: str) -> None:
    """Every solution with its note in `lang`, and nothing of the other language's notes."""
    solutions = page.locator("#solutions details.solution")
    expect(solutions).to_have_count(1 + len(ACCEPTED))
    names = solutions.evaluate_all("els => els.map(e => e.dataset.solution)")
    assert names == ["reference", *(f"accepted/{s}" for s in ACCEPTED)]
    wanted = [NOTES["reference"][lang], *(NOTES["accepted"][s][lang] for s in ACCEPTED)]
    # textContent: the closed blocks' notes are in the page but not rendered.
    shown = page.locator("#solutions .solution-note").evaluate_all("els => els.map(e => e.textContent)")
    assert shown == [plain(n) for n in wanted]
    assert all(bool(HAN.search(text)) == (lang == "zh") for text in shown), shown
    # The reference is open, read-only and highlighted; the others open on a click.
    reference = page.locator(".solution[data-solution=reference] .cm-content")
    expect(reference).to_be_visible()
    assert reference.get_attribute("contenteditable") == "false"
    assert "def " in reference.inner_text()
    assert page.locator(".solution[data-solution=reference] .cm-line span[class]").count() > 0
    last = solutions.last
    expect(last.locator(".cm-content")).to_have_count(0)
    last.locator("summary").click()
    expect(last.locator(".cm-content")).to_be_visible()


def shoot(page: Page, site: Site, name: str) -> None:
    """The panel from its top: the timing, then the reference."""
    page.locator("#tab-solutions").evaluate("el => el.scrollIntoView({block: 'start'})")
    page.screenshot(path=site.shots / name)


def test_the_solutions_open_after_the_learners_own_ac(page: Page, site: Site) -> None:
    register_via_ui(page, unique_name("learner"))
    page.goto("/problems/204")
    ready(page)
    tab = page.locator("#tab-solutions")
    expect(tab).to_have_attribute("data-state", "locked")
    tab.click()
    expect(page.get_by_test_id("solutions-locked")).to_be_visible()
    expect(page.get_by_test_id("solutions-locked")).to_contain_text("你自己的提交通过后，题解才会开放。")
    shoot(page, site, "solutions-locked-zh.png")
    refused = page.request.get("/api/problems/204/solutions")
    assert refused.status == 403
    assert refused.json()["error"]["code"] == "not_solved_yet"

    set_code(page, CORRECT)
    page.get_by_role("button", name="提交").click()
    expect(page.get_by_test_id("summary-score")).to_contain_text("100 / 100", timeout=JUDGED_S)
    # The tab opens live, and the line under the verdict compares the times.
    expect(tab).to_have_attribute("data-state", "open")
    expect(tab.locator(".solutions-lock")).to_be_hidden()
    after = page.get_by_test_id("solutions-after")
    expect(after.get_by_test_id("timing-line")).to_have_text(
        re.compile(TIMING.format(yours="你的代码", reference="参考实现"))
    )
    after.get_by_role("button", name="查看题解").click()
    expect(page.get_by_test_id("solutions-locked")).to_be_hidden()
    notes_shown(page, "zh")
    expect(page.get_by_test_id("solutions-timing")).to_contain_text("参考实现")
    expect(page.get_by_test_id("speed-explained")).to_contain_text("中位数")
    figures = re.findall(r"[0-9.]+ 倍|[0-9.]+×", page.get_by_test_id("solutions-timing").inner_text())
    assert len(figures) == 1, figures  # one ratio, not two that disagree
    assert page.request.get("/api/problems/204/solutions").status == 200
    shoot(page, site, "solutions-zh.png")

    # In English, after a reload: open from the start, English notes only.
    switch_language(page, "en")
    tab = page.get_by_role("tab", name="Solutions")
    expect(tab).to_have_attribute("data-state", "open")
    tab.click()
    notes_shown(page, "en")
    expect(page.get_by_test_id("solutions-timing")).to_contain_text(
        re.compile(TIMING.format(yours="Your code", reference="reference"))
    )
    shoot(page, site, "solutions-en.png")

    # On a phone the panel fits the screen's width.
    page.set_viewport_size({"width": 390, "height": 844})
    overflow = page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0, f"the page is {overflow}px wider than a phone's screen"
    shoot(page, site, "solutions-phone-en.png")
