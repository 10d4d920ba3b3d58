"""Issue 31 items 3, 4, 5 and 7 in a real Chromium, in both languages at 1366×900, 768 px and a
390×844 phone: a failing public case shows its inputs and expected against got; a hidden case
shows neither; a waiting submission says where it is; the time says what it measures; a language
switch keeps the shown result.

One `judge serve` for the module on the local backend (a verdict is needed, not a sandbox) and
two judgements in all. Screenshots land in JUDGE_SCREENSHOT_DIR (else a temporary folder).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, Route, expect

from tests.web.factories import unique_name
from tests.web.pages.sizes import SIZES
from tests.web.pages.test_browser import (
    JUDGED_S,
    Site,
    ready,
    register_via_ui,
    serving_site,
    set_code,
    show_view,
    switch_language,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[3]
WRONG = (REPO / "problems/204-rmsnorm/solutions/wrong/layernorm_mean_subtraction.py").read_text()
# Correct, and slow on purpose (a pause in every call): a judgement of several seconds, whose
# cases a waiting learner sees reported one by one.
SLOW = "import time as _t\n" + (REPO / "problems/204-rmsnorm/reference.py").read_text().replace(
    "def _normalize_fp32(x: torch.Tensor, eps: float) -> torch.Tensor:\n",
    "def _normalize_fp32(x: torch.Tensor, eps: float) -> torch.Tensor:\n    _t.sleep(0.1)\n",
)
LIVE = {
    "zh": re.compile(r"已完成 (\d+) / 20 个用例"),
    "en": re.compile(r"(\d+) of 20 cases done"),
}
# Imports none of 209's parts: it writes its own norm, rope and attention.
SELF_WRITTEN = (REPO / "problems/209-gated-gqa/solutions/accepted/production_llama_style.py").read_text()


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    with serving_site(tmp_path_factory, JUDGE_WORKERS="1", JUDGE_BACKEND="local") as s:
        yield s


def shots_at_every_size(page: Page, site: Site, name: str) -> None:
    """The first failing case's detail at each size (one judgement, three pictures)."""
    for size, viewport in SIZES.items():
        page.set_viewport_size(viewport)
        page.wait_for_timeout(150)
        results_view = page.locator("[data-narrow-tabs] [data-view=results]")
        if results_view.count() and results_view.is_visible():  # a tablet's Statement | Code | Results
            results_view.click()
        page.get_by_test_id("case-compared").first.scroll_into_view_if_needed()
        page.screenshot(path=site.shots / f"compared-{name}-{size}.png")
    page.set_viewport_size(SIZES["desktop"])


QUEUED = {"status": "queued", "progress": None, "ahead": 2}
SUBMISSION_READ = re.compile(r".*/api/submissions/\d+\?lang=[a-z]+$")


def fake_progress(page: Page, state: dict[str, object]) -> None:
    """The first read of the next submission answers `state` (with one worker and nobody else,
    no real submission waits in a queue); later reads are the server's."""
    seen = {"n": 0}

    def handle(route: Route) -> None:
        response = route.fetch()
        seen["n"] += 1
        if seen["n"] > 1:
            route.fulfill(response=response)
            return
        body = response.json() | state
        route.fulfill(response=response, body=json.dumps(body))

    page.unroute(SUBMISSION_READ)
    page.route(SUBMISSION_READ, handle)


@contextmanager
def learner_on_204(browser: Browser, site: Site, name: str) -> Iterator[Page]:
    """A new learner on 204's page at the desktop size; fails on any script error."""
    context = browser.new_context(base_url=site.url, viewport=SIZES["desktop"])
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        register_via_ui(page, unique_name(name))
        page.goto("/problems/204")
        ready(page)
        yield page
    finally:
        context.close()
    assert not errors, errors


def test_a_failing_public_case_shows_what_was_compared(browser: Browser, site: Site) -> None:
    with learner_on_204(browser, site, "cmp") as page:
        set_code(page, WRONG)
        page.get_by_role("button", name="提交").click()
        summary = page.get_by_test_id("summary")
        expect(summary).to_contain_text("答案错误", timeout=JUDGED_S)
        expect(page.get_by_test_id("summary-time")).to_contain_text("你的代码在公开用例上的用时")

        # A failing public case: its inputs, named as the case names them, and the first
        # differing positions; a hidden case: neither.
        failing = page.locator("tr.case[data-case=rmsnorm_fp32] + tr.case-detail")
        inputs = failing.get_by_test_id("case-inputs")
        expect(inputs).to_contain_text("输入（用例随机生成）")
        expect(inputs.locator("tbody tr")).to_have_count(2)
        expect(inputs).to_contain_text("weight")
        expect(inputs).to_contain_text("(2, 5, 32)")
        compared = failing.get_by_test_id("case-compared")
        expect(compared).to_contain_text("期望与实际")
        expect(compared.locator("tbody tr")).to_have_count(5)
        expect(compared.locator("tbody tr").first).to_contain_text("[0, 0, 0]")
        hidden_detail = page.locator("tr.case[data-case=rmsnorm_tiny] + tr.case-detail")
        expect(hidden_detail.get_by_test_id("case-inputs")).to_have_count(0)
        expect(hidden_detail.get_by_test_id("case-compared")).to_have_count(0)
        shots_at_every_size(page, site, "zh")

        # The API agrees: a hidden case carries neither, a public failing one both.
        sub_id = int(page.locator("#status a[href^='/submissions/']").get_attribute("href").rsplit("/", 1)[1])
        body = page.request.get(f"/api/submissions/{sub_id}").json()
        for case in body["cases"]:
            if not case["public"]:
                assert case["inputs"] is None and case["compared"] is None, case["name"]
        assert any(c["inputs"] and c["compared"] for c in body["cases"] if c["public"])

        # The language switch keeps the result, read again in English.
        switch_language(page, "en")
        expect(page.get_by_test_id("summary")).to_contain_text("Wrong answer")
        expect(page.get_by_test_id("summary-time")).to_contain_text("Your code's time on the public cases")
        failing = page.locator("tr.case[data-case=rmsnorm_fp32] + tr.case-detail")
        expect(failing.get_by_test_id("case-inputs")).to_contain_text("Inputs (drawn by the case)")
        expect(failing.get_by_test_id("case-compared")).to_contain_text("Expected and got")
        results = page.locator("#results").inner_text()
        assert not re.search(r"[\u4e00-\u9fff]", results), results[:1000]
        shots_at_every_size(page, site, "en")

        # On a phone, in English: a Run waiting behind others says so.
        page.set_viewport_size(SIZES["phone"])
        fake_progress(page, QUEUED)
        show_view(page, "code")
        page.locator("#run").click()
        show_view(page, "results")
        expect(page.get_by_test_id("waiting-text")).to_have_text("Waiting in the queue behind 2 submissions…")
        page.locator("#status").scroll_into_view_if_needed()
        page.screenshot(path=site.shots / "progress-en-phone.png")
        expect(page.get_by_test_id("summary")).to_contain_text("Wrong answer", timeout=JUDGED_S)
        expect(page.get_by_test_id("summary-score")).to_contain_text("public cases passed")

        # A problem with parts, accepted with each part written in the file itself (none of the
        # part problems solved): each is "not imported (you wrote it yourself)", not "missing".
        page.set_viewport_size(SIZES["tablet"])
        page.goto("/problems/209")
        ready(page)
        page.locator("[data-narrow-tabs] [data-view=code]").click()  # the tablet's Code view
        set_code(page, SELF_WRITTEN)
        page.locator("#run").click()
        expect(page.get_by_test_id("summary")).to_contain_text("Accepted", timeout=JUDGED_S)
        page.locator("[data-narrow-tabs] [data-view=results]").click()
        used = page.get_by_test_id("parts-used")
        expect(used.locator("li")).to_have_count(3)
        for item in used.locator("li").all():
            expect(item).to_contain_text("not imported (you wrote it yourself)")
            expect(item).not_to_contain_text("missing")
        used.scroll_into_view_if_needed()
        page.screenshot(path=site.shots / "parts-self-written-en-tablet.png")


def test_a_long_judgement_reports_its_cases_as_they_finish(browser: Browser, site: Site) -> None:
    """No faked state: a slow correct solution, judged for real; while it runs, the status line
    counts the cases that have reported (and the bar with it), at every size in both languages."""
    assert "_t.sleep(0.1)" in SLOW
    with learner_on_204(browser, site, "live") as page:
        for lang in ("zh", "en"):
            if lang == "en":
                page.set_viewport_size(SIZES["desktop"])
                switch_language(page)
                ready(page)
            set_code(page, SLOW)
            page.locator("#submit").click()
            waiting = page.get_by_test_id("waiting-text")
            counts: list[int] = []
            for size in ("desktop", "tablet", "phone"):
                page.set_viewport_size(SIZES[size])
                show_view(page, "results")  # the status line heads the results
                page.locator("#status").scroll_into_view_if_needed()
                expect(waiting).to_have_text(LIVE[lang], timeout=JUDGED_S)
                found = LIVE[lang].search(waiting.inner_text())
                assert found is not None
                counts.append(int(found.group(1)))
                expect(page.get_by_test_id("progress-bar")).to_be_visible()
                box = page.locator("#status").bounding_box()
                assert box is not None and box["x"] + box["width"] <= SIZES[size]["width"] + 1
                page.screenshot(path=site.shots / f"progress-live-{lang}-{size}.png")
                page.wait_for_timeout(400)
            assert counts == sorted(counts) and 1 <= counts[0] < 20, counts
            summary = page.get_by_test_id("summary")
            show_view(page, "results")
            expect(summary).to_contain_text("通过" if lang == "zh" else "Accepted", timeout=JUDGED_S)
            expect(waiting).to_have_count(0)
            expect(page.get_by_test_id("progress-bar")).to_have_count(0)
