"""The leaderboard as a learner chooses to appear on it (issue 31, item 9), in a real Chromium:
a name of their own on the settings page, their row marked, off the board when they say so; at
1366x900, 768 px and a 390x844 phone, in both languages. One judgement in all (an accepted 204,
so that the learner has a row). Screenshots land in JUDGE_SCREENSHOT_DIR as in test_browser.py."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from tests.web.factories import read_204, unique_name
from tests.web.pages.sizes import SIZES
from tests.web.pages.test_browser import (
    Site,
    ready,
    register_via_ui,
    serving_site,
    submitted,
    switch_language,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CORRECT = read_204("solutions/accepted/div_sqrt_sum.py")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    with serving_site(tmp_path_factory, JUDGE_WORKERS="1") as s:
        yield s


def test_a_learner_chooses_how_the_board_shows_them(page: Page, site: Site) -> None:
    name = unique_name("quiet")
    register_via_ui(page, name)
    assert submitted(page, "204", CORRECT)["verdict"] == "AC"

    page.goto("/leaderboard")
    ready(page)
    mine = page.locator("[data-testid=leaderboard] tr.me")
    expect(mine).to_contain_text(name)

    page.goto("/settings")
    ready(page)
    form = page.get_by_test_id("board-presence")
    form.get_by_label("排行榜上的名字").fill("安静的学习者")
    form.get_by_role("button", name="保存").click()
    expect(page.locator("#board-saved")).to_be_visible()
    page.goto("/leaderboard")
    ready(page)
    expect(mine).to_contain_text("安静的学习者")
    expect(page.get_by_test_id("leaderboard")).not_to_contain_text(name)

    for lang in ("zh", "en"):
        if lang == "en":
            switch_language(page)
        for size_name, size in SIZES.items():
            page.set_viewport_size(size)
            page.goto("/settings")
            ready(page)
            card = page.get_by_test_id("board-presence")
            card.scroll_into_view_if_needed()
            box = card.bounding_box()
            assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= size["width"] + 1
            page.screenshot(path=site.shots / f"privacy-settings-{lang}-{size_name}.png")
            page.goto("/leaderboard")
            ready(page)
            expect(mine).to_be_visible()
            page.screenshot(path=site.shots / f"privacy-board-{lang}-{size_name}.png")

    # Off the board: the row is gone for everyone, the reader included.
    page.set_viewport_size(SIZES["desktop"])
    page.goto("/settings")
    ready(page)
    form.get_by_label("List me on the public leaderboard").uncheck()
    form.get_by_role("button", name="Save").click()
    expect(page.locator("#board-saved")).to_be_visible()
    page.goto("/leaderboard")
    ready(page)
    expect(mine).to_have_count(0)
    expect(page.locator("main")).not_to_contain_text("安静的学习者")
