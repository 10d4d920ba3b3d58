"""The editor and the site's look in a real Chromium: brackets close as typed, Ctrl+F searches,
torch names complete, long lines scroll instead of wrapping, a dark theme follows the system,
and /docs renders with every request outside the site refused.

One `judge serve` for the module (as in test_browser.py); nothing here is judged. Screenshots
land in JUDGE_SCREENSHOT_DIR (else a temporary folder): light and dark, zh and en, desktop
and phone.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Literal

import pytest
from playwright.sync_api import Browser, Page, Route, ViewportSize, expect

from tests.web.factories import unique_name
from tests.web.pages.test_browser import (
    JUDGED_S,
    WRONG,
    Site,
    editor_text,
    ready,
    register_via_ui,
    serving_site,
    set_code,
    show_view,
)
from web.language import LANGUAGE_COOKIE

pytestmark = [pytest.mark.browser, pytest.mark.slow]

DESKTOP: ViewportSize = {"width": 1366, "height": 900}
PHONE: ViewportSize = {"width": 390, "height": 844}
Scheme = Literal["light", "dark"]
LONG_LINE = "scores = F.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]) + mask, dim=-1)  # x\n"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    # The local backend: the results below need a verdict, not a sandbox.
    with serving_site(tmp_path_factory, JUDGE_WORKERS="1", JUDGE_BACKEND="local") as s:
        yield s


@contextmanager
def opened(
    browser: Browser,
    site: Site,
    path: str,
    lang: str = "zh",
    viewport: ViewportSize = DESKTOP,
    scheme: Scheme = "light",
) -> Iterator[Page]:
    """`path` in a fresh profile in `lang`, the system's colour scheme `scheme`; fails on any
    script error or Content-Security-Policy refusal the page logs."""
    context = browser.new_context(base_url=site.url, viewport=viewport, color_scheme=scheme)
    context.add_cookies([{"name": LANGUAGE_COOKIE, "value": lang, "url": site.url}])
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    try:
        page.goto(path)
        yield page
    finally:
        context.close()
    assert not errors, f"{path} logged errors: {errors}"


def type_at_end(page: Page, text: str) -> None:
    page.locator(".cm-content").click()
    page.keyboard.press("Control+End")
    page.keyboard.press("Enter")
    page.keyboard.type(text)


def accept(page: Page, key: str) -> None:
    # CodeMirror ignores Enter/Tab for 75 ms after the list changes (interactionDelay), so a
    # quick typist's Enter makes a new line rather than taking a completion they never saw.
    page.wait_for_timeout(150)
    page.keyboard.press(key)


def last_line(page: Page) -> str:
    return editor_text(page).rstrip("\n").splitlines()[-1].strip()


def test_brackets_close_and_torch_names_complete(browser: Browser, site: Site) -> None:
    with opened(browser, site, "/problems/204") as page:
        ready(page)
        type_at_end(page, "y = (")
        assert last_line(page) == "y = ()", "an opening bracket brings its closing one"
        page.keyboard.type("torch.nn.functional.sil")
        selected = page.locator(".cm-tooltip-autocomplete li[aria-selected]")
        expect(selected).to_have_text("silu")
        page.screenshot(path=site.shots / "editor-completion.png")
        accept(page, "Tab")
        assert last_line(page) == "y = (torch.nn.functional.silu)"
        # F is torch.nn.functional under its usual name; Enter accepts as Tab does.
        page.keyboard.press("End")
        page.keyboard.press("Enter")
        page.keyboard.type("z = F.softm")
        expect(page.locator(".cm-tooltip-autocomplete")).to_contain_text("softmax")
        expect(page.locator(".cm-tooltip-autocomplete")).to_contain_text("softmin")
        accept(page, "Enter")
        assert last_line(page) == "z = F.softmax"
        # After any other expression: a tensor's methods; after self.: the module's attributes.
        page.keyboard.type("(y).transp")
        expect(selected).to_have_text("transpose")
        page.keyboard.press("Escape")
        page.keyboard.press("Enter")
        page.keyboard.type('s = "torch.')
        page.wait_for_timeout(300)  # completion would open within a frame or two
        expect(page.locator(".cm-tooltip-autocomplete")).to_have_count(0)  # not inside a string


def test_completion_knows_self_attributes_and_imports(browser: Browser, site: Site) -> None:
    with opened(browser, site, "/problems/204") as page:
        ready(page)
        set_code(page, "import torch.nn.functional as fn\nimport math\n\n")
        page.keyboard.type("a = fn.gel")
        expect(page.locator(".cm-tooltip-autocomplete li[aria-selected]")).to_have_text("gelu")
        page.keyboard.press("Escape")
        page.keyboard.press("Enter")
        page.keyboard.type("b = math.")
        page.wait_for_timeout(300)
        expect(page.locator(".cm-tooltip-autocomplete")).to_have_count(0)  # not a tensor, not torch
        page.keyboard.press("Enter")
        page.keyboard.type("class M(torch.nn.Module):\n")
        page.keyboard.type("def __init__(self):\n")
        page.keyboard.type("self.weight_scale = 1\n")
        page.keyboard.type("self.weight_s")
        expect(page.locator(".cm-tooltip-autocomplete li[aria-selected]")).to_have_text("weight_scale")
        page.keyboard.type("cale + x.T")  # both typed in full: Enter then makes a new line
        accept(page, "Enter")
        assert editor_text(page).rstrip(" ").endswith("self.weight_scale + x.T\n")
        # Python's own: the names the code defines, keywords and builtins (lang-python's sources).
        page.keyboard.press("Escape")
        set_code(page, "def rotate_half(x):\n    return x\n\n\n")
        page.keyboard.type("rotate_h")
        expect(page.locator(".cm-tooltip-autocomplete li[aria-selected]")).to_have_text("rotate_half")
        page.keyboard.press("Escape")
        page.keyboard.press("Enter")
        page.keyboard.type("isinst")
        expect(page.locator(".cm-tooltip-autocomplete")).to_contain_text("isinstance")
        page.keyboard.press("Escape")
        page.keyboard.press("Enter")
        page.keyboard.type("lambd")
        expect(page.locator(".cm-tooltip-autocomplete")).to_contain_text("lambda")
        # A keyword typed in full offers nothing more: Enter after `pass` is a new line.
        page.keyboard.press("Escape")
        page.keyboard.press("Enter")
        page.keyboard.type("pass")
        accept(page, "Enter")
        assert editor_text(page).endswith("pass\n")


def test_ctrl_f_opens_search_in_the_page_language(browser: Browser, site: Site) -> None:
    for lang, find, viewport in (("zh", "查找", DESKTOP), ("en", "Find", PHONE)):
        with opened(browser, site, "/problems/204", lang, viewport) as page:
            ready(page)
            show_view(page, "code")
            page.locator(".cm-content").click()
            page.keyboard.press("Control+F")
            field = page.locator(".cm-search input[name=search]")
            expect(field).to_be_focused()
            expect(field).to_have_attribute("placeholder", find)
            page.keyboard.type("def ")
            page.keyboard.press("Enter")
            expect(page.locator(".cm-searchMatch").first).to_be_visible()
            page.screenshot(path=site.shots / f"editor-search-{lang}.png")


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_long_lines_scroll_not_wrap(browser: Browser, site: Site, viewport: ViewportSize) -> None:
    with opened(browser, site, "/problems/204", viewport=viewport) as page:
        ready(page)
        set_code(page, LONG_LINE)
        line = page.locator(".cm-line").first
        expect(line).to_contain_text("scores = F.softmax")
        sizes = page.evaluate(
            """() => {
              const scroller = document.querySelector('.cm-scroller');
              const line = document.querySelector('.cm-line');
              return {scroll: scroller.scrollWidth, client: scroller.clientWidth,
                      line: line.getBoundingClientRect().height,
                      lineHeight: document.querySelector('.cm-editor').ownerDocument.defaultView
                        .getComputedStyle(line).lineHeight};
            }"""
        )
        assert sizes["scroll"] > sizes["client"], f"the long line should scroll sideways: {sizes}"
        assert sizes["line"] < 1.5 * float(sizes["lineHeight"].removesuffix("px")), f"wrapped: {sizes}"
        name = "desktop" if viewport is DESKTOP else "phone"
        page.screenshot(path=site.shots / f"editor-long-line-{name}.png")


LUMINANCE = """(css) => {
  const [r, g, b] = css.match(/[\\d.]+/g).slice(0, 3).map(Number).map((c) => {
    c /= 255; return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4; });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}"""

# Text on its background (the nearest ancestor with an opaque one): WCAG contrast ratios, for
# the first element of each selector that is on screen.
CONTRASTS = """(selectors) => {
  const lum = LUMINANCE;
  const bg = (el) => {
    for (; el; el = el.parentElement) {
      const c = getComputedStyle(el).backgroundColor;
      if (c && !c.startsWith('rgba(0, 0, 0, 0)') && c !== 'transparent') return c;
    }
    return 'rgb(255, 255, 255)';
  };
  const out = {};
  for (const sel of selectors) {
    const el = [...document.querySelectorAll(sel)].find((e) => e.checkVisibility() && e.type !== 'hidden');
    if (!el) continue;
    const a = lum(getComputedStyle(el).color), b = lum(bg(el));
    out[sel] = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
  }
  return out;
}""".replace("LUMINANCE", LUMINANCE)
READABLE = (
    "body",
    ".site-header a",
    ".statement p",
    ".statement .katex",
    ".statement pre",
    ".statement .highlight .c1",
    ".statement .highlight .mf",
    ".statement .highlight .n",
    ".statement code",
    ".meta",
    ".muted",
    ".badge",
    ".difficulty",
    ".cm-content",
    ".cm-gutters",
    ".tag",
    "label",
    "input",
    ".help",
)


def contrasts(page: Page) -> dict[str, float]:
    found: dict[str, float] = page.evaluate(CONTRASTS, list(READABLE))
    return found


# On 204's page, at least these are there to measure (else the check would pass on nothing).
MEASURED = {"body", ".statement p", ".statement .katex", ".statement .highlight .c1", ".cm-content", ".meta"}


def unreadable(page: Page) -> dict[str, float]:
    found = contrasts(page)
    if page.locator("[data-narrow-tabs]").is_visible():  # one view at a time: the code's too
        show_view(page, "code")
        for sel, ratio in contrasts(page).items():
            found[sel] = min(ratio, found.get(sel, ratio))
        show_view(page, "statement")
    if page.url.endswith("/problems/204"):
        assert found.keys() >= MEASURED, f"not measured: {MEASURED - found.keys()}"
    return {sel: round(ratio, 2) for sel, ratio in found.items() if ratio < 4.5}


def background_luminance(page: Page, selector: str) -> float:
    found: float = page.evaluate(
        f"(sel) => ({LUMINANCE})(getComputedStyle(document.querySelector(sel)).backgroundColor)", selector
    )
    return found


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_dark_theme_follows_the_system(browser: Browser, site: Site, lang: str) -> None:
    for viewport, name in ((DESKTOP, "desktop"), (PHONE, "phone")):
        with opened(browser, site, "/problems/204", lang, viewport, "dark") as page:
            ready(page)
            background, editor = background_luminance(page, "html"), background_luminance(page, ".cm-editor")
            assert background < 0.05 and editor < 0.05, f"dark page {background}, editor {editor}"
            low = unreadable(page)
            assert not low, f"text below 4.5:1 on its background in the dark theme: {low}"
            page.screenshot(path=site.shots / f"dark-problem-{lang}-{name}.png", full_page=name == "desktop")
            code = page.locator(".statement .highlight").first
            code.scroll_into_view_if_needed()
            code.screenshot(path=site.shots / f"dark-statement-code-{lang}-{name}.png")
    for path in ("/problems", "/login"):
        with opened(browser, site, path, lang, DESKTOP, "dark") as page:
            ready(page)
            low = unreadable(page)
            assert not low, f"{path} below 4.5:1 in the dark theme: {low}"
            page.screenshot(path=site.shots / f"dark-{path.strip('/')}-{lang}.png")


RESULTS_READABLE = (
    "[data-testid=summary]",
    "[data-testid=summary] .badge",
    "tr.case .badge",
    "tr.case th",
    "[data-testid=case-hint]",
    "[data-testid=case-message]",
    ".cm-error-line",
)


def test_dark_results_hints_and_error_lines_are_readable(browser: Browser, site: Site) -> None:
    with opened(browser, site, "/problems", scheme="dark") as page:
        register_via_ui(page, unique_name("dark"))
        page.goto("/problems/204")
        ready(page)
        set_code(page, WRONG)
        page.get_by_role("button", name="运行").click()
        expect(page.get_by_test_id("case-hint").first).to_be_visible(timeout=JUDGED_S)
        low = {s: round(r, 2) for s, r in page.evaluate(CONTRASTS, list(RESULTS_READABLE)).items() if r < 4.5}
        assert not low, f"results below 4.5:1 in the dark theme: {low}"
        page.screenshot(path=site.shots / "dark-results-zh.png")
        set_code(page, "import torch\n\n\ndef broken(:\n    pass\n")
        page.get_by_role("button", name="运行").click()
        expect(page.locator(".cm-error-line")).to_be_visible(timeout=JUDGED_S)
        line = page.evaluate(CONTRASTS, [".cm-error-line"])[".cm-error-line"]
        assert line >= 4.5, f"the marked error line is {line:.2f}:1"
        page.screenshot(path=site.shots / "dark-error-line-zh.png")


def test_light_theme_stays_light_and_readable(browser: Browser, site: Site) -> None:
    with opened(browser, site, "/problems/204") as page:
        ready(page)
        assert background_luminance(page, "html") > 0.8
        low = unreadable(page)
        assert not low, f"text below 4.5:1 in the light theme: {low}"
        page.screenshot(path=site.shots / "light-problem-zh.png")
        code = page.locator(".statement .highlight").first
        code.screenshot(path=site.shots / "light-statement-code-zh.png")


def test_docs_render_with_no_network(browser: Browser, site: Site) -> None:
    outside: list[str] = []

    def only_the_site(route: Route) -> None:
        if route.request.url.startswith(site.url):
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort()

    context = browser.new_context(base_url=site.url, viewport=DESKTOP)
    errors: list[str] = []
    try:
        context.route("**/*", only_the_site)
        page = context.new_page()
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
        page.goto("/docs")
        expect(page.locator(".opblock").first).to_be_visible(timeout=15_000)
        expect(page.locator(".opblock-summary-path", has_text="/api/submissions").first).to_be_visible()
        page.locator(".opblock-summary", has_text="/healthz").first.click()
        expect(page.locator(".opblock-body").first).to_be_visible()
        page.screenshot(path=site.shots / "docs-offline.png")
    finally:
        context.close()
    assert not outside, f"/docs asked outside the site: {outside}"
    assert not errors, f"/docs logged errors (a CSP refusal among them?): {errors}"
