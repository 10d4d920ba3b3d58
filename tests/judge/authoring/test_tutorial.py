"""Issue 32 item 5: docs/authoring.md opens with a tutorial, and this test runs it as written, step
by step, outside the checkout: scaffold, write every file from the page's own blocks, preview
(the page loads, Run works, a saved statement shows without a restart), validate quick and in
full (sound), pack, and install into another problems folder.

The steps come from the page: `<!-- tutorial: run -->` before a ```sh block runs its lines (`judge`
is this checkout's), `<!-- tutorial: file NAME -->` before a block writes it into the package,
`<!-- tutorial: delete NAME -->` removes a file, and `<!-- tutorial: preview -->` is the preview,
checked in a real Chromium."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.paths import REPO_ROOT
from tests.web.pages.test_browser import JUDGED_S as JUDGED_MS
from tests.web.pages.test_browser import chromium, ready, set_code
from tests.web.preview.test_preview import RELOADED_MS, previewing

DOC = REPO_ROOT / "docs" / "authoring.md"
PACKAGE = Path("my-problems/301-square")
MARK = re.compile(r"<!-- tutorial: (run|file|delete|preview)(?: (\S+))? -->")
FENCE = re.compile(r"```[a-z]*\n(.*?)```", re.S)


@dataclass(frozen=True)
class Step:
    kind: str  # run, file, delete, preview
    target: str  # a file for file/delete
    body: str  # the block's text for run/file/preview


def steps(doc: str) -> list[Step]:
    """The tutorial's steps in page order."""
    found = []
    for mark in MARK.finditer(doc):
        kind, target = mark.group(1), mark.group(2) or ""
        body = ""
        if kind != "delete":
            fence = FENCE.search(doc, mark.end())
            assert fence is not None and doc[mark.end() : fence.start()].strip() == "", mark.group(0)
            body = fence.group(1)
        found.append(Step(kind, target, body))
    return found


def judge_command(line: str) -> list[str]:
    words = shlex.split(line)
    assert words[0] == "judge", line
    return [sys.executable, "-m", "judge", *words[1:]]


def test_the_page_holds_every_step_in_order() -> None:
    kinds = [s.kind for s in steps(DOC.read_text())]
    assert kinds[0] == "run" and "preview" in kinds and kinds[-1] == "run"
    assert {s.target for s in steps(DOC.read_text()) if s.kind == "file"} >= {
        "problem.toml",
        "statement.zh.md",
        "statement.en.md",
        "starter.py",
        "reference.py",
        "cases.py",
        "solutions/notes.toml",
    }


def run_tutorial(workdir: Path, preview: Callable[[Path, list[str]], None]) -> list[str]:
    """Every step of the page in `workdir`; what each command printed, in order."""
    env = {**os.environ, "JUDGE_CACHE_DIR": str(workdir / "cache")}
    said = []
    for step in steps(DOC.read_text()):
        package = workdir / PACKAGE
        if step.kind == "file":
            (package / step.target).write_text(step.body)
        elif step.kind == "delete":
            (package / step.target).unlink()
        elif step.kind == "preview":
            preview(package, judge_command(step.body.strip()))
        else:
            for line in step.body.strip().splitlines():
                res = subprocess.run(
                    judge_command(line), cwd=workdir, env=env, capture_output=True, text=True, timeout=900
                )
                assert res.returncode == 0, f"{line}\n{res.stdout}\n{res.stderr}"
                said.append(res.stdout)
    return said


def preview(tmp_path: Path, package: Path, command: list[str]) -> None:
    """The preview step: `judge preview` on the package; the page loads with its banner, Run
    judges the reference's code AC, and a saved statement shows without a restart."""
    assert command[-1] == str(PACKAGE)
    with previewing(tmp_path, package) as shown, chromium() as browser:
        context = browser.new_context(viewport={"width": 1366, "height": 900})
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(shown.url)
        ready(page)
        assert page.url.endswith("/problems/301")
        expect(page.get_by_test_id("preview-banner")).to_contain_text("预览")
        expect(page.locator(".statement")).to_contain_text("实现 square(x)")
        set_code(page, (package / "reference.py").read_text())
        page.keyboard.press("Control+Enter")
        expect(page.get_by_test_id("summary")).to_contain_text("通过", timeout=JUDGED_MS)
        zh = package / "statement.zh.md"
        saved = zh.read_text()
        zh.write_text(saved.replace("每个元素是", "每个元素都是"))
        expect(page.locator(".statement")).to_contain_text("每个元素都是", timeout=RELOADED_MS)
        zh.write_text(saved)  # the page as the tutorial wrote it, for the steps after
        expect(page.locator(".statement")).to_contain_text("每个元素是", timeout=RELOADED_MS)
        context.close()
        assert not errors, errors


@pytest.mark.slow
@pytest.mark.browser
def test_the_tutorial_runs_as_written(tmp_path: Path) -> None:
    previewed: list[Path] = []

    def previewed_in_chromium(package: Path, command: list[str]) -> None:
        preview(tmp_path / "preview", package, command)
        previewed.append(package)

    work = tmp_path / "work"
    work.mkdir()
    (tmp_path / "preview").mkdir()
    said = run_tutorial(work, previewed_in_chromium)
    assert previewed == [work / PACKAGE]
    quick, whole = (s for s in said if s.startswith("301-square"))
    assert "OK (quick:" in quick.splitlines()[0]
    assert whole.splitlines()[0].startswith("301-square  OK") and "✓ mutants" in whole
    # Installed elsewhere, as packed: the same files (the archive's manifest aside).
    installed = work / "shared-problems" / "301-square"
    assert sorted(p.relative_to(installed) for p in installed.rglob("*") if p.is_file()) == sorted(
        p.relative_to(work / PACKAGE) for p in (work / PACKAGE).rglob("*") if p.is_file()
    )
