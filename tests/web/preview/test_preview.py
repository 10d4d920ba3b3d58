"""`judge preview` as an author uses it: a real `judge preview` process on a package in tmp_path,
driven in a real Chromium; Run judges on the local backend; edits show without a restart."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.factories import make_package
from tests.paths import REPO_ROOT
from tests.web.factories import free_port, stop
from tests.web.pages.test_browser import CHROMIUM, chromium, editor_text, ready, set_code, switch_language

pytestmark = [pytest.mark.browser, pytest.mark.slow]

RELOADED_MS = 15_000  # a save is seen within a second; room for a slow machine
JUDGED_MS = 90_000
URL_LINE = re.compile(r"(http://127\.0\.0\.1:\d+/preview/login\?token=\S+)")


@dataclass
class Preview:
    url: str  # the printed sign-in link
    process: subprocess.Popen[str]
    log: Path


@contextmanager
def previewing(tmp: Path, target: Path, *args: str) -> Iterator[Preview]:
    """`judge preview target` on a free port until the block ends; its own cache folder."""
    if not Path(CHROMIUM).exists():
        if os.environ.get("JUDGE_REQUIRE_BROWSER") == "1":
            pytest.fail(f"JUDGE_REQUIRE_BROWSER=1 but {CHROMIUM} is missing")
        pytest.skip(f"no Chromium at {CHROMIUM}")
    # Its own temporary folder, to see that the throwaway site is removed at the end.
    (tmp / "tmp").mkdir()
    env = {
        **os.environ,
        "JUDGE_CACHE_DIR": str(tmp / "cache"),
        "JUDGE_DATA_DIR": str(tmp / "data"),
        "TMPDIR": str(tmp / "tmp"),
    }
    log = tmp / "preview.log"
    with log.open("w") as err:
        process = subprocess.Popen(
            [sys.executable, "-m", "judge", "preview", str(target), "--port", str(free_port()), *args],
            env=env,
            cwd=REPO_ROOT,
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
        )
        try:
            assert process.stdout is not None
            url = ""
            deadline = time.monotonic() + 60
            while not url and time.monotonic() < deadline:
                line = process.stdout.readline()
                if not line:
                    break
                if found := URL_LINE.search(line):
                    url = found.group(1)
            assert url, "judge preview printed no URL:\n" + log.read_text()[-3000:]
            yield Preview(url, process, log)
        finally:
            stop(process)
            if process.stdout is not None:
                process.stdout.close()


def statement(pkg: Path, text: str) -> None:
    (pkg / "statement.zh.md").write_text(text, encoding="utf-8")


def test_preview_shows_runs_and_follows_edits(tmp_path: Path) -> None:
    pkg = make_package(tmp_path / "work")
    shots = Path(os.environ.get("JUDGE_SCREENSHOT_DIR") or tmp_path / "shots")
    shots.mkdir(parents=True, exist_ok=True)
    with previewing(tmp_path, pkg) as preview, chromium() as browser:
        context = browser.new_context(viewport={"width": 1366, "height": 900})
        page: Page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        # The printed link signs the author in and opens the problem itself.
        page.goto(preview.url)
        ready(page)
        assert page.url.endswith("/problems/901")
        banner = page.get_by_test_id("preview-banner")
        expect(banner).to_contain_text("预览 — 尚未验证")
        expect(banner).to_contain_text(f"judge validate --quick --watch {pkg}")
        # A missing language is said on the page.
        expect(banner).to_contain_text("缺少 statement.en.md：页面会改为显示中文题面")
        page.screenshot(path=shots / "preview-zh.png")

        # Run judges the files as they are, on the author's machine.
        set_code(page, "def f(x):\n    return x * 2\n")
        page.keyboard.press("Control+Enter")
        expect(page.get_by_test_id("summary")).to_be_visible(timeout=JUDGED_MS)
        assert page.locator("tr.case .badge").all_inner_texts() == ["AC"]

        # An edit of the statement shows without a restart: the page reloads itself.
        statement(pkg, "# 加倍\n\n返回 $2x$，形状不变。\n")
        expect(page.locator(".statement")).to_contain_text("形状不变", timeout=RELOADED_MS)
        ready(page)
        assert "return x * 2" in editor_text(page)  # the author's code survives the reload

        # KaTeX that does not parse is listed on the banner; fixing it clears the list.
        statement(pkg, "# 加倍\n\n返回 $\\frac{2x$。\n")
        math_errors = page.get_by_test_id("preview-math-errors")
        expect(math_errors).to_be_visible(timeout=RELOADED_MS)
        expect(math_errors).to_contain_text("KaTeX 无法解析的公式")
        statement(pkg, "# 加倍\n\n返回 $\\frac{2x}{1}$。\n")
        expect(page.locator(".statement .katex").first).to_be_visible(timeout=RELOADED_MS)
        ready(page)
        expect(math_errors).to_be_hidden()

        # Markdown that does not render (an unclosed fence) is said on the page.
        statement(pkg, "# 加倍\n\n```python\nf(x)\n")
        expect(banner).to_contain_text("code fence ``` is never closed", timeout=RELOADED_MS)
        statement(pkg, "# 加倍\n\n返回 $2x$。\n")
        expect(banner).not_to_contain_text("never closed", timeout=RELOADED_MS)

        # A package that does not load shows why, and recovers when fixed.
        toml = (pkg / "problem.toml").read_text()
        (pkg / "problem.toml").write_text(toml.replace('slug = "double"', "slug = "))
        expect(page.get_by_test_id("preview-load-error")).to_be_visible(timeout=RELOADED_MS)
        expect(banner).to_contain_text("预览 — 题目包无法加载")
        (pkg / "problem.toml").write_text(toml)
        expect(page.locator(".statement")).to_contain_text("返回", timeout=RELOADED_MS)
        ready(page)
        expect(page.get_by_test_id("preview-load-error")).to_have_count(0)

        # The same page in English.
        switch_language(page, "en")
        expect(banner).to_contain_text("Preview — not validated")
        page.screenshot(path=shots / "preview-en.png")
        context.close()
        assert not errors, errors
    # Stopped (SIGTERM): its database, key and link are gone.
    assert preview.process.returncode == 0
    assert list((tmp_path / "tmp").iterdir()) == []


def test_preview_refuses_other_hosts(tmp_path: Path) -> None:
    pkg = make_package(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "judge", "preview", str(pkg), "--host", "0.0.0.0"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "JUDGE_DATA_DIR": str(tmp_path / "data"), "JUDGE_CACHE_DIR": str(tmp_path / "c")},
    )
    assert done.returncode != 0
    assert "loopback" in done.stderr
    assert "Traceback" not in done.stderr
