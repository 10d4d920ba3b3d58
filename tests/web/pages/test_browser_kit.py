"""The practice kit's download on the problem list, in a real Chromium: the first download after a
start waits for the server to build the kit, and the page says how far it got instead of
leaving the learner without a word; then the zip downloads. Logged in, the learner can ask for
their accepted code in their files."""

from __future__ import annotations

import io
import shutil
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.web.factories import PROBLEMS, unique_name
from tests.web.pages.test_browser import Site, ready, register_via_ui, serving_site

pytestmark = [pytest.mark.browser, pytest.mark.slow]

BUILD_S = 300_000  # ms: a cold reference cache runs each problem's reference and known mistakes


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    problems = tmp_path_factory.mktemp("kit-problems")
    for name in ("204-rmsnorm", "207-softmax-cross-entropy"):
        shutil.copytree(PROBLEMS / name, problems / name)
    with serving_site(
        tmp_path_factory, JUDGE_PROBLEMS_DIR=str(problems), JUDGE_BACKEND="local", JUDGE_WORKERS="1"
    ) as s:
        yield s


def watch_status(page: Page) -> None:
    """Keep every text the status line shows, however briefly (window.kitTexts)."""
    page.evaluate(
        """() => {
            const el = document.querySelector('[data-testid=kit-status]');
            window.kitTexts = [];
            new MutationObserver(() => window.kitTexts.push(el.textContent))
                .observe(el, {childList: true, characterData: true, subtree: true});
        }"""
    )


def test_the_first_download_says_how_far_the_build_got(page: Page, site: Site, tmp_path: Path) -> None:
    page.goto("/problems")
    ready(page)
    expect(page.get_by_test_id("kit-mine")).to_have_count(0)  # anonymous: the public kit only
    watch_status(page)
    with page.expect_download(timeout=BUILD_S) as waited:
        page.get_by_test_id("kit-download").click()
    download = waited.value
    assert download.suggested_filename == "llm-judge-practice.zip"
    texts = page.evaluate("window.kitTexts")
    assert any(t.startswith("正在准备练习包") for t in texts), texts
    expect(page.get_by_test_id("kit-status")).to_have_text("练习包已准备好，正在下载。")
    saved = tmp_path / "kit.zip"
    download.save_as(saved)
    names = zipfile.ZipFile(saved).namelist()
    assert "practice/judge.py" in names and "practice/tiny-qwen3.5/config.json" in names


def test_a_learner_can_take_their_code_with_the_kit(page: Page, site: Site) -> None:
    register_via_ui(page, unique_name("kit"))
    mine = page.get_by_test_id("kit-mine")
    expect(mine).not_to_be_checked()  # a choice, never a surprise over local files
    mine.check()
    with page.expect_download(timeout=BUILD_S) as waited:
        page.get_by_test_id("kit-download").click()
    download = waited.value
    assert "mine=1" in download.url
    path = download.path()
    starter = (PROBLEMS / "204-rmsnorm" / "starter.py").read_text()
    # Nothing accepted yet: their files are the starters.
    archive = zipfile.ZipFile(io.BytesIO(Path(path).read_bytes()))
    assert archive.read("practice/qwen/norm.py").decode() == starter
