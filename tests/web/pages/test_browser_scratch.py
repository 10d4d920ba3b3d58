"""The scratch cell in a real Chromium: a learner opens "Try your input" on 204, types a
snippet, runs it, and sees what it printed, the tensor it returned, and the reference's answer
to the same call beside theirs (the same with a wrong solution: "differs", with the largest
difference); in Chinese, then in English, on a desktop and on a phone. Screenshots:
scratch-zh.png, scratch-mismatch-zh.png, scratch-phone-zh.png, scratch-en.png, scratch-phone-en.png.

Then each problem's own snippet (issue 31, item 1): on 205 and 206 the cell opens on the
package's example, which runs with the reference's code as the learner's and agrees with the
reference, and "use a public case" fills in that case's call, which runs too; at 1366x900, 768
and 390 px, in both languages (one run per size and language, two on the desktop). Screenshots:
scratch-example-*.png and scratch-case-*.png, each with a -filled.png of the cell before the run.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from tests.paths import REPO_ROOT
from tests.web.factories import unique_name
from tests.web.pages.test_browser import (
    CORRECT,
    JUDGED_S,
    WRONG,
    Site,
    ready,
    register_via_ui,
    serving_site,
    show_view,
    switch_language,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SNIPPET = 'x = torch.randn(2, 8).bfloat16()\nprint("rows:", x.shape[0])\nm = RMSNorm(8)\nm(x)\n'


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    with serving_site(tmp_path_factory, JUDGE_WORKERS="1") as s:
        yield s


def type_into(page: Page, editor: str, code: str) -> None:
    page.locator(f"{editor} .cm-content").click()
    page.keyboard.press("Control+A")
    page.keyboard.insert_text(code)


def run_snippet(page: Page, tab: str, button: str) -> None:
    page.get_by_role("tab", name=tab).click()
    expect(page.get_by_test_id("scratch")).to_be_visible()
    type_into(page, "#scratch-editor", SNIPPET)
    page.get_by_role("button", name=button).click()


def test_a_snippet_runs_and_shows_its_output_beside_the_references(page: Page, site: Site) -> None:
    register_via_ui(page, unique_name("learner"))
    page.goto("/problems/204")
    ready(page)
    assert page.locator(".cm-editor").count() == 1  # the scratch editor comes with its tab
    type_into(page, "#editor", CORRECT)
    page.get_by_role("tab", name="试运行").click()
    # Prefilled with 204's own example (problem.toml's [scratch]).
    expect(page.locator("#scratch-editor .cm-content")).to_contain_text("RMSNorm(32)")
    run_snippet(page, "试运行", "运行这段")
    output = page.get_by_test_id("scratch-output")
    expect(output.get_by_test_id("scratch-match")).to_have_text("与参考答案一致", timeout=JUDGED_S)
    expect(output.get_by_test_id("scratch-log")).to_have_text("rows: 2\n")
    expect(output.get_by_test_id("scratch-value")).to_contain_text("dtype=torch.bfloat16")
    expect(output.get_by_test_id("scratch-returned")).to_contain_text("torch.bfloat16  [2, 8]")
    call = output.get_by_test_id("scratch-call")
    expect(call).to_contain_text("RMSNorm(8)(bfloat16[2, 8])")
    assert (
        call.get_by_test_id("scratch-learner").inner_text()
        == call.get_by_test_id("scratch-reference").inner_text()
    )
    # Not a submission: the history stays empty.
    assert page.request.get("/api/submissions").json() == []
    page.get_by_test_id("results-dock").screenshot(path=site.shots / "scratch-zh.png")

    # A wrong solution: the same call differs from the reference, by how much.
    type_into(page, "#editor", WRONG)
    page.get_by_role("button", name="运行这段").click()
    expect(output.get_by_test_id("scratch-mismatch")).to_have_text("与参考答案不同", timeout=JUDGED_S)
    expect(output.get_by_test_id("scratch-call")).to_contain_text("最大差值")
    page.screenshot(path=site.shots / "scratch-mismatch-zh.png")
    fits_a_phone(page, site, "scratch-phone-zh.png")
    page.set_viewport_size({"width": 1366, "height": 900})

    # In English: the same run, English words only.
    switch_language(page, "en")
    type_into(page, "#editor", CORRECT)
    run_snippet(page, "Try your input", "Run this")
    expect(output.get_by_test_id("scratch-match")).to_have_text("Same as the reference", timeout=JUDGED_S)
    expect(output).to_contain_text("matches the reference")
    expect(output).not_to_contain_text("参考")
    page.screenshot(path=site.shots / "scratch-en.png")

    fits_a_phone(page, site, "scratch-phone-en.png")


def fits_a_phone(page: Page, site: Site, shot: str) -> None:
    page.set_viewport_size({"width": 390, "height": 844})
    show_view(page, "results")
    page.get_by_test_id("scratch-output").scroll_into_view_if_needed()
    overflow = page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0, f"the page is {overflow}px wider than a phone's screen"
    page.screenshot(path=site.shots / shot)


SIZES = {"desktop": (1366, 900), "tablet": (768, 1024), "phone": (390, 844)}
FOLDERS = {"205": "205-rope", "206": "206-swiglu"}
# (size, language, problem, what is run: the example, or the public case of that number)
TRIES = [
    ("desktop", "zh", "205", "example"),
    ("desktop", "zh", "205", 3),
    ("desktop", "en", "206", "example"),
    ("tablet", "zh", "206", 2),
    ("tablet", "en", "205", "example"),
    ("phone", "zh", "205", 2),
    ("phone", "en", "206", "example"),
]
CASE_LABEL = {"zh": "公开用例 {n}：{name}", "en": "Public case {n}: {name}"}
TAB = {"zh": "试运行", "en": "Try your input"}
RUN = {"zh": "运行这段", "en": "Run this"}
MATCH = {"zh": "与参考答案一致", "en": "Same as the reference"}


def reference(problem: str) -> str:
    return (REPO_ROOT / "problems" / FOLDERS[problem] / "reference.py").read_text()


def test_each_problems_own_snippet_and_its_public_cases_run(page: Page, site: Site) -> None:
    register_via_ui(page, unique_name("snippets"))
    for size, lang, problem, what in TRIES:
        width, height = SIZES[size]
        page.set_viewport_size({"width": width, "height": height})
        page.goto(f"/problems/{problem}")
        ready(page)
        switch_language(page, lang)
        examples = page.request.get(f"/api/scratch/examples/{problem}").json()
        show_view(page, "code")
        type_into(page, "#editor", reference(problem))
        show_view(page, "results")
        page.get_by_role("tab", name=TAB[lang]).click()
        snippet = page.locator("#scratch-editor .cm-content")
        # The package's own example, not one template for every problem.
        first_line = examples["example"].strip().splitlines()[0]
        expect(snippet).to_contain_text(first_line)
        menu = page.get_by_test_id("scratch-case")
        expect(menu).to_be_visible()
        shot = f"scratch-example-{problem}-{size}-{lang}.png"
        if what != "example":
            chosen = next(c for c in examples["cases"] if c["number"] == what)
            menu.select_option(label=CASE_LABEL[lang].format(n=what, name=chosen["case"]))
            for line in chosen["snippet"].strip().splitlines()[-2:]:
                expect(snippet).to_contain_text(line.strip())
            shot = f"scratch-case-{problem}-{what}-{size}-{lang}.png"
        # What the learner starts from: the menu and the snippet, before the run.
        page.locator(".scratch-toolbar").scroll_into_view_if_needed()
        page.screenshot(path=site.shots / shot.replace(".png", "-filled.png"))
        page.get_by_role("button", name=RUN[lang]).click()
        output = page.get_by_test_id("scratch-output")
        expect(output.get_by_test_id("scratch-match").first).to_have_text(MATCH[lang], timeout=JUDGED_S)
        expect(output.get_by_test_id("scratch-failure")).to_have_count(0)
        expect(output.get_by_test_id("scratch-mismatch")).to_have_count(0)
        overflow = page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0, f"{size}: the page is {overflow}px wider than the screen"
        page.screenshot(path=site.shots / shot)
