"""The learner's path through the site in a real Chromium (Debian's, driven by Playwright).

A real `judge serve` on a free port judges with the backend it finds (Docker under .ci/run),
so every click below goes through the same server, queue, sandbox and pages a learner uses.
Screenshots of the main pages land in JUDGE_SCREENSHOT_DIR (`make screenshots` writes the
README's), else in a temporary folder.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect, sync_playwright

from judge.authoring.starters import in_language
from tests.paths import REPO_ROOT
from tests.web.factories import PASSWORD, read_204, running_server, unique_name

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CHROMIUM = os.environ.get("JUDGE_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
JUDGED_S = 90_000  # ms: a cold Docker start plus the reference run, with room to spare
CORRECT = read_204("solutions/accepted/div_sqrt_sum.py")
WRONG = read_204("solutions/wrong/weight_not_plus_one.py")
PUBLIC_CASES = 6
SUBMITS_PER_USER = 4


@dataclass
class Site:
    url: str
    env: dict[str, str]
    shots: Path


def _require(what: str, reason: str) -> None:
    if os.environ.get("JUDGE_REQUIRE_BROWSER") == "1":
        pytest.fail(f"JUDGE_REQUIRE_BROWSER=1 but {what}: {reason}")
    pytest.skip(f"{what}: {reason}")


@contextmanager
def serving_site(tmp_path_factory: pytest.TempPathFactory, **settings: str) -> Iterator[Site]:
    """A `judge serve` with these settings for the browser, or a skip when there is none."""
    if not Path(CHROMIUM).exists():
        _require("no Chromium", f"{CHROMIUM} is missing (apt-get install chromium)")
    if not (REPO_ROOT / "web" / "static" / "dist" / "app.js").exists():
        _require("the front end is not built", "run `make frontend`")
    tmp = tmp_path_factory.mktemp("browser")
    with running_server(tmp, **settings) as (url, env):
        shots = Path(os.environ.get("JUDGE_SCREENSHOT_DIR") or tmp / "shots")
        shots.mkdir(parents=True, exist_ok=True)
        yield Site(url, env, shots)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    # Low enough for test_rate_limit_says_so to reach; each other test uses a new learner.
    with serving_site(tmp_path_factory, JUDGE_WORKERS="2", JUDGE_SUBMITS_PER_USER=str(SUBMITS_PER_USER)) as s:
        yield s


@contextmanager
def chromium() -> Iterator[Browser]:
    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        yield launched
        launched.close()


@contextmanager
def checked_page(browser: Browser, site: Site) -> Iterator[Page]:
    """A fresh browser profile (no cookies, no storage) that fails on any script error."""
    context = browser.new_context(base_url=site.url, viewport={"width": 1366, "height": 900})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    try:
        yield page
    finally:
        context.close()
    expected = EXPECTED_ERRORS.pop(id(page), ())
    unexpected = [e for e in errors if not any(x in e for x in expected)]
    assert not unexpected, f"the page logged errors: {unexpected}"


# Console errors a test provokes on purpose (the browser logs every failed request), by page.
EXPECTED_ERRORS: dict[int, tuple[str, ...]] = {}


def expect_console_errors(page: Page, *fragments: str) -> None:
    EXPECTED_ERRORS[id(page)] = fragments


def full_page_shot(page: Page, path: Path) -> None:
    """A picture of the whole page. CodeMirror draws only the lines inside the window, so the
    window is first made as tall as the page (else the code below the fold is missing)."""
    size = page.viewport_size or {"width": 1366, "height": 900}
    height = page.evaluate("() => document.documentElement.scrollHeight")
    page.set_viewport_size({"width": size["width"], "height": max(height, size["height"])})
    page.wait_for_timeout(100)  # one frame for CodeMirror to draw the lines now in view
    page.screenshot(path=path, full_page=True)
    page.set_viewport_size(size)


def ready(page: Page) -> None:
    page.wait_for_selector("body[data-ready=true]")


def register_via_ui(page: Page, username: str) -> None:
    page.goto("/problems")
    ready(page)
    page.get_by_role("link", name="注册").first.click()
    page.get_by_label("用户名").fill(username)
    page.get_by_label("密码", exact=True).fill(PASSWORD)
    page.get_by_label("确认密码").fill(PASSWORD)
    page.locator("form[action='/register'] button[type=submit]").click()
    page.wait_for_url("**/problems")
    ready(page)


def log_in_via_ui(page: Page, username: str) -> None:
    page.get_by_label("用户名").fill(username)
    page.get_by_label("密码", exact=True).fill(PASSWORD)
    page.locator("form[action='/login'] button[type=submit]").click()


def submitted(page: Page, problem_id: str, code: str, timeout_s: float = JUDGED_S / 1000) -> dict[str, Any]:
    """A Submit through the API with the page's session (as the learner's other tab would),
    followed until judged."""
    csrf = page.locator("meta[name=csrf-token]").get_attribute("content") or ""
    res = page.request.post(
        "/api/submissions",
        data={"problem_id": problem_id, "code": code, "mode": "submit"},
        headers={"X-CSRF-Token": csrf},
    )
    assert res.status == 202, res.text()
    sub_id = res.json()["id"]
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        body: dict[str, Any] = page.request.get(f"/api/submissions/{sub_id}?wait=20").json()
        if body["status"] == "done":
            return body
    raise AssertionError(f"{problem_id}: submission {sub_id} was not judged in {timeout_s} s")


def switch_language(page: Page, to: str | None = None) -> None:
    """The header's switch to the other language (or to `to`, "zh" or "en", when the page is
    not in it already), returning once the page in that language has loaded. The switch
    reloads the page, so waiting for `ready` alone could pass on the page being left."""
    lang = page.evaluate("() => document.documentElement.lang")
    if to is not None and lang.startswith(to):
        return
    page.get_by_test_id("language-switch").click()
    # documentElement is null for a moment while the next page loads
    page.wait_for_function(
        f"() => document.documentElement?.lang && document.documentElement.lang !== {json.dumps(lang)}"
    )
    ready(page)
    if to is not None:
        assert page.evaluate("() => document.documentElement.lang").startswith(to)


def show_view(page: Page, view: str) -> None:
    """On one column (a tablet, a phone) the problem page shows one of its Statement | Code |
    Results views: choose `view`. On a laptop every pane is shown and nothing is clicked."""
    tab = page.locator(f"[data-narrow-tabs] [data-view={view}]")
    if tab.count() and tab.is_visible():
        tab.click()


def set_code(page: Page, code: str) -> None:
    """What a learner does with code from their own editor: select all, paste."""
    show_view(page, "code")
    page.locator(".cm-content").first.click()
    page.keyboard.press("Control+A")
    page.keyboard.insert_text(code)


def editor_text(page: Page) -> str:
    text: str = page.evaluate("() => document.getElementById('editor').editor.getCode()")
    return text


def wait_saved(page: Page) -> None:
    expect(page.locator("#save-state")).to_have_attribute("data-state", "saved", timeout=10_000)


def test_new_learner_solves_204(page: Page, site: Site) -> None:
    name = unique_name("learner")
    register_via_ui(page, name)
    page.screenshot(path=site.shots / "problems.png", full_page=True)
    page.get_by_role("link", name="零中心的 RMSNorm 与带门的 RMSNorm").click()
    ready(page)
    # The statement's math is laid out by KaTeX, and the editor opens on the starter.
    expect(page.locator(".statement .katex").first).to_be_visible()
    assert editor_text(page) == in_language(read_204("starter.py"), "zh")

    set_code(page, CORRECT)
    page.keyboard.press("Control+Enter")  # Run, from inside the editor
    expect(page.get_by_test_id("summary")).to_be_visible(timeout=JUDGED_S)
    rows = page.locator("tr.case")
    assert rows.count() == PUBLIC_CASES
    assert rows.locator(".badge").all_inner_texts() == ["AC"] * PUBLIC_CASES
    expect(page.get_by_test_id("summary-score")).to_contain_text("不计分")
    page.screenshot(path=site.shots / "problem-run.png", full_page=True)

    page.get_by_role("button", name="提交").click()
    expect(page.get_by_test_id("summary-score")).to_contain_text("100 / 100", timeout=JUDGED_S)
    assert page.locator("tr.case").count() > PUBLIC_CASES  # hidden cases too
    expect(page.locator("tr.case .tag.hidden-tag").first).to_be_visible()
    expect(page.get_by_test_id("problem-best")).to_have_text("100")

    # The submission has a page of its own, with the code read-only.
    page.locator("#status a").click()
    ready(page)
    expect(page.get_by_test_id("summary-score")).to_contain_text("100 / 100")
    assert "class RMSNorm" in page.locator("#code-view .cm-content").inner_text()
    full_page_shot(page, site.shots / "submission.png")

    page.goto("/problems")
    ready(page)
    row = page.locator("tr[data-problem='204']")
    expect(row.get_by_test_id("best-score")).to_have_text("100 / 100")
    expect(row.locator(".badge")).to_have_text("已通过")
    expect(page.get_by_test_id("progress-solved")).to_have_text("1")
    page.goto("/leaderboard")
    mine = page.locator("tr.me")
    expect(mine).to_contain_text(name)
    expect(mine).to_contain_text("100")
    page.screenshot(path=site.shots / "leaderboard.png", full_page=True)


def test_wrong_solution_shows_its_hint(page: Page, site: Site) -> None:
    register_via_ui(page, unique_name("learner"))
    page.goto("/problems/204")
    ready(page)
    set_code(page, WRONG)
    page.get_by_role("button", name="运行").click()
    expect(page.get_by_test_id("summary")).to_be_visible(timeout=JUDGED_S)
    expect(page.get_by_test_id("summary")).to_contain_text("答案错误")
    hint = page.get_by_test_id("case-hint").first
    expect(hint).to_be_visible()
    expect(hint).to_contain_text("RMSNorm 的权重是零中心的")
    # The wrong case's message says what was expected and what came back.
    expect(page.locator("tr.case.v-WA").first).to_be_visible()
    expect(page.get_by_test_id("case-message").first).not_to_be_empty()
    # The picture is of the hint: the case it is shown on, in the middle of the screen.
    hint.evaluate("el => el.scrollIntoView({block: 'center'})")
    page.screenshot(path=site.shots / "problem-hint.png")

    # The "My submissions" tab lists it; opening it shows its results and can load its code.
    set_code(page, "# something else\n")
    page.get_by_role("tab", name="我的提交").click()
    item = page.get_by_test_id("history").locator("button.history-item")
    expect(item).to_have_count(1)
    expect(item).to_contain_text("WA")
    item.click()
    expect(page.get_by_test_id("case-hint").first).to_be_visible()
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="在编辑器中打开其代码").click()
    assert editor_text(page) == WRONG
    # Arrow keys move between the tabs (the ARIA tabs pattern).
    page.get_by_role("tab", name="我的提交").focus()
    page.keyboard.press("ArrowLeft")
    expect(page.get_by_role("tab", name="题面")).to_have_attribute("aria-selected", "true")
    expect(page.locator("#panel-statement")).to_be_visible()


# A mistake no package lists: the output doubled. The judge still says what it sees.
DOUBLED = read_204("reference.py").replace(
    "return (_normalize_fp32(x, self.eps) * scale).to(x.dtype)",
    "return (2 * _normalize_fp32(x, self.eps) * scale).to(x.dtype)",
)


def has_chinese(text: str) -> bool:
    return any("\u4e00" <= ch <= "\u9fff" for ch in text)


def test_a_failing_case_shows_its_diagnosis_and_heatmap_in_one_language(page: Page, site: Site) -> None:
    assert "2 * _normalize_fp32" in DOUBLED
    register_via_ui(page, unique_name("learner"))
    page.goto("/problems/204")
    ready(page)
    set_code(page, DOUBLED)
    page.get_by_role("button", name="运行").click()
    expect(page.get_by_test_id("summary")).to_contain_text("答案错误", timeout=JUDGED_S)
    diagnosis = page.get_by_test_id("case-diagnoses").first
    expect(diagnosis).to_contain_text("倍")  # "2 倍": a constant factor, in Chinese
    heatmap = page.get_by_test_id("error-map").first
    expect(heatmap).to_be_visible()
    assert heatmap.locator(".error-map-cell").count() > 1
    expect(heatmap.locator("figcaption")).to_contain_text("误差")
    message = page.get_by_test_id("case-message").first.inner_text()
    assert "元素不符" in message and "elements differ" not in message
    heatmap.scroll_into_view_if_needed()
    page.screenshot(path=site.shots / "problem-diagnosis-zh.png")

    # The same submission read in English: every line of it in English only.
    switch_language(page, "en")
    # The switch keeps the result on screen, read again in English; opening it from the history
    # draws it once more, so each drawing is waited for before the next.
    expect(page.get_by_test_id("summary")).to_contain_text("Wrong answer")
    page.get_by_role("tab", name="My submissions").click()
    page.get_by_test_id("history").locator("button.history-item").first.click()
    expect(page.get_by_role("button", name="Open its code in the editor")).to_be_visible()
    diagnosis = page.get_by_test_id("case-diagnoses").first
    expect(diagnosis).to_contain_text("times the reference")
    heatmap = page.get_by_test_id("error-map").first
    expect(heatmap.locator("figcaption")).to_contain_text("tolerance")
    results = page.locator("#results").inner_text()
    assert "elements differ" in results and not has_chinese(results), results[:2000]
    heatmap.scroll_into_view_if_needed()
    page.screenshot(path=site.shots / "problem-diagnosis-en.png")


def test_syntax_error_marks_the_line(page: Page) -> None:
    register_via_ui(page, unique_name("learner"))
    page.goto("/problems/204")
    ready(page)
    broken = CORRECT.splitlines()
    broken[9] = "    def broken(self x):"  # line 10
    set_code(page, "\n".join(broken) + "\n")
    page.get_by_role("button", name="运行").click()
    expect(page.get_by_test_id("summary")).to_contain_text("无法加载", timeout=JUDGED_S)
    marked = page.locator(".cm-error-line")
    expect(marked).to_have_count(1)
    expect(marked).to_have_attribute("data-error-line", "10")
    expect(page.get_by_role("alert").filter(has_text="10")).to_be_visible()
    # Editing clears the mark: it pointed at code that is gone.
    marked.click()
    page.keyboard.type("#")
    expect(page.locator(".cm-error-line")).to_have_count(0)


def test_language_switch(page: Page) -> None:
    page.goto("/problems")
    ready(page)
    assert page.locator("html").get_attribute("lang") == "zh-CN"
    expect(page.get_by_role("heading", level=1)).to_have_text("题目")
    switch_language(page, "en")
    expect(page.get_by_role("heading", level=1)).to_have_text("Problems")
    page.get_by_role("link", name="Zero-centred RMSNorm and gated RMSNorm").click()
    ready(page)
    expect(page.get_by_role("button", name="Run")).to_be_visible()
    expect(page.locator(".statement h2").first).to_contain_text("What to implement")
    switch_language(page, "zh")  # back to Chinese, on the same page
    assert page.url.endswith("/problems/204")
    expect(page.get_by_role("button", name="运行")).to_be_visible()


def test_draft_survives_reload_and_another_browser(page: Page, browser: Browser, site: Site) -> None:
    name = unique_name("learner")
    register_via_ui(page, name)
    page.goto("/problems/204")
    ready(page)
    draft = "# my draft\n" + CORRECT
    set_code(page, draft)
    wait_saved(page)
    page.reload()
    ready(page)
    assert editor_text(page) == draft

    other = browser.new_context(base_url=site.url)
    elsewhere = other.new_page()
    elsewhere.goto("/login?next=/problems/204")
    log_in_via_ui(elsewhere, name)
    elsewhere.wait_for_url("**/problems/204")
    ready(elsewhere)
    assert editor_text(elsewhere) == draft
    other.close()

    # Reset asks first: "no" keeps the draft, "yes" goes back to the starter.
    page.once("dialog", lambda dialog: dialog.dismiss())
    page.get_by_role("button", name="恢复初始代码").click()
    assert editor_text(page) == draft
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="恢复初始代码").click()
    assert editor_text(page) == in_language(read_204("starter.py"), "zh")
    wait_saved(page)
    page.reload()
    ready(page)
    assert editor_text(page) == in_language(read_204("starter.py"), "zh")


def test_expired_session_keeps_the_code(page: Page) -> None:
    name = unique_name("learner")
    register_via_ui(page, name)
    page.goto("/problems/204")
    ready(page)
    page.context.clear_cookies()  # the session is gone, as after expiry or a logout elsewhere
    expect_console_errors(page, "status of 401")
    mine = "# written after the session ended\n" + CORRECT
    set_code(page, mine)
    page.get_by_role("button", name="运行").click()
    status = page.get_by_test_id("status")
    expect(status).to_contain_text("未登录")
    expect(page.locator("#save-state")).to_have_attribute("data-state", "error")
    assert editor_text(page) == mine
    # Logging in again brings the learner back to the same code, now saved on the server too.
    status.get_by_role("link").click()
    log_in_via_ui(page, name)
    page.wait_for_url("**/problems/204")
    ready(page)
    assert editor_text(page) == mine
    wait_saved(page)


def test_rate_limit_says_so_and_keeps_the_code(page: Page) -> None:
    register_via_ui(page, unique_name("learner"))
    page.goto("/problems/204")
    ready(page)
    csrf = page.locator("meta[name=csrf-token]").get_attribute("content") or ""
    for _ in range(SUBMITS_PER_USER):  # the learner's other tabs used up the allowance
        res = page.request.post(
            "/api/submissions",
            data={"problem_id": "204", "code": "# quick\n", "mode": "run"},
            headers={"X-CSRF-Token": csrf},
        )
        assert res.status == 202, res.text()
    expect_console_errors(page, "status of 429")
    mine = "# one more try\n" + CORRECT
    set_code(page, mine)
    page.get_by_role("button", name="运行").click()
    expect(page.get_by_test_id("status")).to_contain_text("请求过于频繁")
    assert editor_text(page) == mine
    expect(page.get_by_role("button", name="运行")).to_be_enabled()


def test_phone_layout_and_keyboard(browser: Browser, site: Site) -> None:
    phone = browser.new_context(base_url=site.url, viewport={"width": 390, "height": 844}, is_mobile=True)
    page = phone.new_page()
    page.goto("/problems/204")
    ready(page)
    overflow = page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0, f"the page is {overflow}px wider than a phone's screen"
    page.screenshot(path=site.shots / "problem-phone.png", full_page=False)
    # The first Tab reaches the skip link, which moves focus to the content.
    page.keyboard.press("Tab")
    assert page.evaluate("() => document.activeElement.className") == "skip-link"
    # Every control has a name a screen reader can read out.
    unnamed = page.evaluate(
        """() => [...document.querySelectorAll('a, button, input:not([type=hidden]), select, [role=tab]')]
            .filter(el => !(el.getAttribute('aria-label') || (el.labels && el.labels.length)
                            || el.textContent.trim()))
            .map(el => el.outerHTML.slice(0, 80))"""
    )
    assert unnamed == []
    phone.close()


def no_overflow(page: Page) -> None:
    """Nothing of the page reaches past the window's right edge."""
    overflow = page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0, f"{page.url}: the page is {overflow}px wider than the window"


def admin_via_cli(site: Site, name: str, role: str = "admin") -> None:
    """`judge admin create NAME [--role instructor]` against the site's database, as an operator
    makes an admin or an instructor."""
    created = subprocess.run(
        [sys.executable, "-m", "judge", "admin", "create", name, "--role", role, "--password-stdin"],
        input=PASSWORD,
        text=True,
        capture_output=True,
        env=site.env,
        cwd=REPO_ROOT,
        timeout=60,
    )
    assert created.returncode == 0, created.stderr


def test_settings_tokens_and_admin_pages(page: Page, site: Site) -> None:
    admin = unique_name("admin")
    admin_via_cli(site, admin)
    page.goto("/login")
    log_in_via_ui(page, admin)
    page.wait_for_url("**/problems")
    page.goto("/settings")
    ready(page)
    page.get_by_label("名称").fill("my-laptop")
    page.get_by_role("button", name="创建令牌").click()
    token = page.get_by_test_id("token-value")
    expect(token).not_to_be_empty()
    assert token.inner_text().startswith("jdg_")
    expect(page.get_by_test_id("tokens")).to_contain_text("my-laptop")
    # When it stops working, on the row the page added, in the page's own date format.
    row = page.get_by_test_id("tokens").locator("tr", has_text="my-laptop")
    expect(row.locator("time").nth(1)).to_have_text(re.compile(r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}$"))
    expect(page.get_by_test_id("tokens").locator("thead")).to_contain_text("到期")
    page.screenshot(path=site.shots / "settings.png", full_page=True)
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="撤销 my-laptop").first.click()
    expect(page.get_by_test_id("tokens")).not_to_contain_text("my-laptop")

    page.goto("/admin")
    ready(page)
    row = page.locator("[data-testid=admin-problems] tr[data-problem='204']")
    row.get_by_role("button", name="验证").click()
    expect(
        page.locator("[data-testid=admin-problems] tr[data-problem='204'] td.validation")
    ).to_have_attribute("data-status", "sound", timeout=180_000)
    expect(page.get_by_test_id("admin-users")).to_contain_text(admin)
    page.screenshot(path=site.shots / "admin.png", full_page=True)
