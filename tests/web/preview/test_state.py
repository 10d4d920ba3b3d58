"""The preview's banner states, from validation records written as `judge validate` writes them,
and its packages as loaded from real folders (a broken one with its error)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from judge.authoring.package import Problem
from judge.authoring.validate import Scope, Validation
from judge.authoring.validated import remember
from judge.authoring.validation.diagnostics import Check, Diagnostics
from judge.cli import UsageError
from tests.factories import make_package
from web.preview.packages import fingerprint, load, package_dirs, problems_folder
from web.preview.state import PreviewState, Soundness, package_banner


def validation(pkg: Path, scope: Scope, *checks: Check) -> Validation:
    return Validation(str(pkg), Diagnostics(list(checks)), scope=scope)


def test_banner_follows_the_newest_validation_of_the_content(tmp_path: Path) -> None:
    pkg = make_package(tmp_path / "work")
    cache = tmp_path / "cache"
    loaded = load([pkg])[0]
    assert package_banner(loaded, cache, str(pkg)).state is Soundness.UNVALIDATED

    problem = Problem(pkg)
    remember(cache, problem, "local", validation(pkg, Scope(quick=True), Check("cases", "note", "3 cases")))
    banner = package_banner(loaded, cache, str(pkg))
    assert (banner.state, banner.scope) == (Soundness.SOUND_SO_FAR, "quick")
    assert banner.command == f"judge validate {pkg}"  # next: the whole validation

    time.sleep(0.01)  # a later record
    remember(cache, problem, "local", validation(pkg, Scope(), Check("cases", "note", "3 cases")))
    banner = package_banner(loaded, cache, str(pkg))
    assert banner.state is Soundness.SOUND and banner.finished_at is not None

    time.sleep(0.01)
    failing = Check("wrong/times_three", "error", "passes every case\nadd a case that catches it")
    remember(cache, problem, "local", validation(pkg, Scope(quick=True), failing))
    banner = package_banner(loaded, cache, str(pkg))
    assert banner.state is Soundness.NOT_SOUND
    assert banner.failed == ("wrong/times_three: passes every case",)

    # An edit makes the records another content's: not validated again.
    (pkg / "statement.zh.md").write_text("# 加倍\n\n返回 $2x$，形状不变。\n")
    assert package_banner(load([pkg])[0], cache, str(pkg)).state is Soundness.UNVALIDATED


def test_a_broken_package_is_kept_with_its_error(tmp_path: Path) -> None:
    pkg = make_package(tmp_path)
    before = fingerprint([pkg], tmp_path / "cache")
    (pkg / "cases.py").write_text("raise RuntimeError('half written')\n")
    assert fingerprint([pkg], tmp_path / "cache") != before
    (loaded,) = load([pkg])
    assert loaded.problem is None and loaded.error is not None and "half written" in loaded.error
    state = PreviewState(pkg, tmp_path / "cache")
    state.replace([loaded], "v1")
    assert state.landing() == "/problems"  # no problem page to open
    assert state.banner().packages[0].load_error == loaded.error


def test_folders_and_the_sign_in_token(tmp_path: Path) -> None:
    first, second = make_package(tmp_path, problem_id="901"), make_package(tmp_path, problem_id="902")
    assert package_dirs(tmp_path) == [first.resolve(), second.resolve()]
    assert problems_folder(tmp_path, package_dirs(tmp_path), tmp_path / "x") == tmp_path.resolve()
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    lone = problems_folder(first, package_dirs(first), scratch)
    assert [p.name for p in lone.iterdir()] == [first.name]  # its sibling 902 is not previewed
    with pytest.raises(UsageError, match="no problem package"):
        package_dirs(scratch)

    state = PreviewState(first, tmp_path / "cache")
    assert not state.take_login("guess")
    assert state.take_login(state.login_token)
    assert not state.take_login(state.login_token)  # once
