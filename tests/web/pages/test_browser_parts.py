"""The course's capstone in a real Chromium: a learner builds the model (217) from their own parts.

They solve every part problem 217 needs but one, submit 217 and are told, with a link, which part
is missing; they follow the link, solve that part on its page, come back and get AC with their own
parts. Same real `judge serve` and backend as test_browser.py; screenshots land in the same place.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from judge.authoring.package import Problem
from tests.web.factories import PROBLEMS, unique_name
from tests.web.pages.test_browser import (
    Site,
    ready,
    register_via_ui,
    serving_site,
    set_code,
    submitted,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

MODEL = Problem(PROBLEMS / "217-qwen35")
MODEL_JUDGED_MS = 300_000  # a cold trusted run of 217 (reference and wrong solutions) with room to spare
PART_JUDGED_S = 300.0
# What 217's reference imports itself: these parts must be the ones the judgement used.
DIRECT_IMPORTS = set(re.findall(r"^from (qwen\.\w+) import", MODEL.reference.source(), re.M))


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    # One learner submits every part: the per-user limit must not stop them.
    with serving_site(tmp_path_factory, JUDGE_WORKERS="2", JUDGE_SUBMITS_PER_USER="100") as s:
        yield s


def submitted_part(page: Page, problem_id: str, code: str) -> dict[str, Any]:
    return submitted(page, problem_id, code, PART_JUDGED_S)


def last_needed_by_none(parts: list[Problem]) -> Problem:
    """A part no other part imports: leaving it out leaves the others solvable."""
    needed = {q.id for p in parts for q in p.part_problems}
    return [p for p in parts if p.id not in needed][-1]


def test_a_learner_builds_the_model_from_their_own_parts(page: Page, site: Site) -> None:
    parts = MODEL.part_problems
    assert len(parts) >= len(DIRECT_IMPORTS) > 0
    left_out = last_needed_by_none(parts)
    register_via_ui(page, unique_name("builder"))
    for part in parts:  # in dependency order: a part's own parts are the learner's by then
        if part.id != left_out.id:
            done = submitted_part(page, part.id, part.reference.source())
            assert done["verdict"] == "AC", (part.id, done)

    page.goto(f"/problems/{MODEL.id}")
    ready(page)
    panel = page.get_by_test_id("parts-panel")
    expect(panel.get_by_role("heading")).to_contain_text("你的模型")
    expect(panel.get_by_test_id("parts-count")).to_have_text(f"已完成 {len(parts) - 1} / {len(parts)} 个零件")
    expect(panel.locator("li[data-state=solved]")).to_have_count(len(parts) - 1)
    missing = panel.locator(f"li[data-part='{left_out.id}']")
    expect(missing).to_have_attribute("data-state", "missing")
    expect(missing).to_contain_text("缺少")
    expect(missing).to_contain_text(left_out.module_name.replace(".", "/") + ".py")
    page.screenshot(path=site.shots / "model-parts.png", full_page=True)

    # Submitted without that part: a CE that names it, with a link to its problem.
    model_code = MODEL.reference.source()
    set_code(page, model_code)
    page.get_by_role("button", name="提交").click()
    expect(page.get_by_test_id("summary")).to_contain_text("无法加载", timeout=MODEL_JUDGED_MS)
    message = page.get_by_test_id("case-message").first
    expect(message).to_contain_text(left_out.module_name)
    expect(message).to_contain_text(f"第 {left_out.id} 题")
    used = page.get_by_test_id("parts-used")
    expect(used.locator(f"li[data-part='{left_out.id}']")).to_have_attribute("data-origin", "missing")
    message.scroll_into_view_if_needed()
    page.screenshot(path=site.shots / "model-missing-part.png")
    # The link comes from the case's missing_problem field, beside the message (plain text).
    link = page.get_by_test_id("problem-link").first
    expect(link).to_have_attribute("href", f"/problems/{left_out.id}")
    expect(link).to_have_text(f"先去做第 {left_out.id} 题")
    link.click()
    page.wait_for_url(f"**/problems/{left_out.id}")
    ready(page)

    # The learner solves it on its own page; its own parts, if any, are theirs too.
    set_code(page, left_out.reference.source())
    page.get_by_role("button", name="提交").click()
    expect(page.get_by_test_id("summary")).to_contain_text("通过", timeout=MODEL_JUDGED_MS)
    for own in left_out.part_problems:
        item = page.get_by_test_id("parts-used").locator(f"li[data-part='{own.id}']")
        expect(item).to_have_attribute("data-origin", "learner")

    page.goto(f"/problems/{MODEL.id}")
    ready(page)
    expect(page.get_by_test_id("parts-panel").locator("li[data-state=solved]")).to_have_count(len(parts))
    set_code(page, model_code)
    page.get_by_role("button", name="提交").click()
    expect(page.get_by_test_id("summary")).to_contain_text("通过", timeout=MODEL_JUDGED_MS)
    expect(page.get_by_test_id("summary-score")).to_contain_text(f"{MODEL.max_score} / {MODEL.max_score}")
    used = page.get_by_test_id("parts-used")
    expect(used.locator("li")).to_have_count(len(parts))
    expect(used.locator("li[data-origin=learner]")).to_have_count(len(parts))
    for part in parts:
        if part.module_name in DIRECT_IMPORTS:
            item = used.locator(f"li[data-part='{part.id}']")
            expect(item).to_have_attribute("data-used", "true")
            expect(item).to_contain_text("你的")
    used.scroll_into_view_if_needed()
    page.screenshot(path=site.shots / "model-accepted.png")

    page.goto("/problems")
    ready(page)
    progress = page.get_by_test_id("model-progress")
    expect(progress).to_have_text(f"你的模型：已完成 {len(parts)} / {len(parts)} 个零件")
    expect(progress).to_have_attribute("href", f"/problems/{MODEL.id}")
    page.screenshot(path=site.shots / "problems-model-progress.png", full_page=True)

    # The panel of every part fits a phone's screen.
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(f"/problems/{MODEL.id}")
    ready(page)
    overflow = page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0, f"the page is {overflow}px wider than a phone's screen"
    panel = page.get_by_test_id("parts-panel")
    expect(panel).not_to_have_attribute("open", "")  # every part is theirs: closed, the count says so
    panel.locator("summary").click()
    expect(panel.locator("li[data-part] a").first).to_be_visible()
    panel.screenshot(path=site.shots / "model-parts-phone.png")
