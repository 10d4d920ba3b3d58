"""Issue 32 item 2, the author's fast loop: `--quick` and `--only` run part of a validation, each
family of checks says how long it took, an unchanged package is read back from its last
validation (and a save makes it run again), and `--watch` re-validates on save, printing only
what changed."""

from __future__ import annotations

import os
import selectors
import subprocess
import sys
import time
from pathlib import Path
from typing import IO

import pytest

from judge.authoring.validate import SLOW, Scope, family, render_validation
from judge.authoring.validating import Validator, changed_checks
from judge.settings import JudgeSettings
from tests.factories import PROPERTIES_CASE_F, make_package
from tests.paths import REPO_ROOT

CASES = (
    """
import torch
from judge.core.casekit import case


@case(points=50, public=True)
def small(impl, rng):
    return {"y": impl.f(rng.normal(2, 3))}


@case(points=50)
def larger(impl, rng):
    return {"y": impl.f(rng.normal(4, 5))}
"""
    + PROPERTIES_CASE_F
)
WRONG = {
    "plus_one": '"""多加了 1。\n\nYou added 1."""\ndef f(x):\n    return 2 * x + 1\n',
    "squared": '"""平方了。\n\nYou squared x."""\ndef f(x):\n    return x * x\n',
}


def validator(tmp_path: Path, scope: Scope) -> Validator:
    return Validator(JudgeSettings(cache_dir=tmp_path / "cache"), "local", scope)


@pytest.fixture
def pkg(tmp_path: Path) -> Path:
    accepted = {"sum": "def f(x):\n    return x + x\n"}
    return make_package(tmp_path / "problems", cases=CASES, wrong=WRONG, accepted=accepted)


def test_quick_leaves_out_the_slow_checks_and_times_the_rest(pkg: Path, tmp_path: Path) -> None:
    result = validator(tmp_path, Scope(quick=True)).one(pkg)
    families = {family(c.name) for c in result.checks}
    assert not families & SLOW
    assert {"reference", "deterministic", "accepted", "wrong", "starter", "coverage"} <= families
    assert set(result.timings) >= {"reference", "wrong", "accepted"}
    assert all(s >= 0 for s in result.timings.values())
    shown = render_validation([result])
    assert "(quick: mutants, properties, scratch not checked)" in shown.splitlines()[0]
    assert " s)" in shown  # each family's time on its first line


def test_only_runs_one_check_and_what_it_needs(pkg: Path, tmp_path: Path) -> None:
    result = validator(tmp_path, Scope(only=frozenset({"wrong"}))).one(pkg)
    assert sorted(c.name for c in result.checks) == ["wrong/plus_one", "wrong/squared"]
    assert all(c.ok for c in result.checks)
    with pytest.raises(ValueError, match="no check named mutant"):
        Scope(only=frozenset({"mutant"}))


def test_an_unchanged_package_is_read_back_and_a_save_runs_it_again(pkg: Path, tmp_path: Path) -> None:
    check = validator(tmp_path, Scope(quick=True))
    first = check.one(pkg)
    assert first.restored is None
    started = time.perf_counter()
    again = check.one(pkg)
    took = time.perf_counter() - started
    assert again.restored is not None and took < 1.0, took
    assert [(c.name, c.level, c.detail) for c in again.checks] == [
        (c.name, c.level, c.detail) for c in first.checks
    ]
    assert "unchanged since its last validation" in render_validation([again])
    # Another scope is another record; an edit is another content.
    assert validator(tmp_path, Scope(only=frozenset({"wrong"}))).one(pkg).restored is None
    write_wrong(pkg, "squared", "2 * x")
    edited = check.one(pkg)
    assert edited.restored is None
    lines = changed_checks(first, edited)
    assert lines == [next(line for line in lines if "wrong/squared" in line)]
    assert "✗" in lines[0] and "passes every case" in lines[0]


def test_watch_validates_again_on_save_and_prints_what_changed(pkg: Path, tmp_path: Path) -> None:
    env = {**os.environ, "JUDGE_CACHE_DIR": str(tmp_path / "cache"), "PYTHONUNBUFFERED": "1"}
    command = [sys.executable, "-m", "judge", "validate", "--quick", "--watch", "--backend", "local"]
    proc = subprocess.Popen(
        [*command, str(pkg)], cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        assert proc.stdout is not None and proc.stderr is not None
        read_until(proc.stdout, "packages sound", 120)  # the first report
        read_until(proc.stderr, "watching for saves", 30)
        write_wrong(pkg, "plus_one", "x * 2")
        said = read_until(proc.stdout, "passes every case", 120)
        assert "wrong/plus_one" in said and "NOT SOUND" in said
        assert "wrong/squared" not in said  # unchanged: not printed again
    finally:
        proc.terminate()
        proc.communicate(timeout=30)


def write_wrong(pkg: Path, name: str, body: str) -> None:
    """A save of a wrong solution that is now right: its check fails ("passes every case")."""
    source = f'"""改过了。\n\nEdited."""\ndef f(x):\n    return {body}\n'
    (pkg / "solutions" / "wrong" / f"{name}.py").write_text(source)


def read_until(stream: IO[bytes], text: str, timeout_s: float) -> str:
    """What `stream` (a pipe) says until it holds `text`; fails after `timeout_s`. Raw reads of
    the descriptor: a buffered reader could hold the awaited line while select() sees nothing."""
    seen = b""
    deadline = time.monotonic() + timeout_s
    with selectors.DefaultSelector() as sel:
        sel.register(stream, selectors.EVENT_READ)
        while time.monotonic() < deadline and text.encode() not in seen:
            if sel.select(timeout=0.5):
                chunk = os.read(stream.fileno(), 65536)
                if not chunk:
                    break
                seen += chunk
    said = seen.decode("utf-8", "replace")
    assert text in said, f"{text!r} not said within {timeout_s} s; said:\n{said}"
    return said
