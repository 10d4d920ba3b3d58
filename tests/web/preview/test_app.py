"""The preview's site in process: its one-time sign-in, its version, its banner; and `judge serve`'s
pages without any of it."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from judge.cli import UsageError
from tests.factories import make_package
from tests.web.factories import make_client, make_settings
from web.platform import Platform
from web.preview.serve import preview_app, run_preview
from web.preview.state import PreviewState
from web.preview.watcher import refresh


@pytest.fixture
def preview(tmp_path: Path) -> Iterator[tuple[FastAPI, Path]]:
    pkg = make_package(tmp_path / "work")
    make_package(tmp_path / "work", problem_id="902")  # a sibling: not previewed
    app, _watcher = preview_app(pkg, make_settings(tmp_path), "127.0.0.1", 8000, "local")
    platform: Platform = app.state.platform
    try:
        yield app, pkg
    finally:
        platform.engine.dispose()
        shutil.rmtree(platform.settings.data_dir)


def test_the_link_signs_in_once_and_opens_the_problem(preview: tuple[FastAPI, Path]) -> None:
    app, _pkg = preview
    state: PreviewState = app.state.preview
    client = TestClient(app)
    page = client.get(f"/preview/login?token={state.login_token}")
    assert page.status_code == 200 and page.url.path == "/problems/901"
    assert 'data-testid="preview-banner"' in page.text and "预览 — 尚未验证" in page.text
    assert '<a href="/settings" class="who"' in page.text  # signed in, as "preview"
    assert sorted(app.state.platform.problems) == ["901"]
    again = TestClient(app).get(f"/preview/login?token={state.login_token}")
    assert again.status_code == 410


def test_an_edit_changes_the_version_and_the_page(preview: tuple[FastAPI, Path]) -> None:
    app, pkg = preview
    client = TestClient(app)
    before = client.get("/preview/version").json()["version"]
    (pkg / "statement.zh.md").write_text("# 加倍\n\n新的题面。\n")
    refresh(app.state.platform, app.state.preview, [pkg])  # what the watcher does on a change
    assert client.get("/preview/version").json()["version"] != before
    assert "新的题面" in client.get("/problems/901").text
    # The list is the author's packages: no practice kit to download for a course.
    listed = client.get("/problems").text
    assert "/problems/901" in listed and "kit-download" not in listed


def test_serve_pages_have_no_banner(tmp_path: Path) -> None:
    client = make_client(make_settings(tmp_path))
    page = client.get("/problems/204")
    assert page.status_code == 200 and "preview-banner" not in page.text
    assert "kit-download" in client.get("/problems").text
    assert client.get("/preview/version").status_code == 404


def test_only_loopback(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="loopback"):
        run_preview(make_settings(tmp_path), tmp_path, "0.0.0.0", None, "local", "en", "INFO")
