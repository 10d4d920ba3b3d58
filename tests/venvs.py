"""A venv holding this torch and nothing else, built once per test run and shared.

Installing torch into a new venv (unpacking about a gigabyte) took 20-30 s, and two kit test
modules each did it. The first test process to ask builds it under pytest's root temporary
folder, which every xdist worker of the run shares, while the others wait on a lock; a test that
installs more into it works on a copy made of hard links (pip adds and removes files, it never
rewrites one in place, so the shared venv stays as it was built)."""

from __future__ import annotations

import fcntl
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from tests.paths import run_tmp

# What a torch-only venv must not hold: the judge and the libraries it brings.
OURS = {"numpy", "safetensors", "pydantic", "pydantic-settings", "llm-judge"}


def _run(cmd: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=900)


def installed_names(python: Path) -> set[str]:
    listed = _run([str(python), "-m", "pip", "list", "--format=json"])
    assert listed.returncode == 0, listed.stderr[-2000:]
    return {p["name"].lower() for p in json.loads(listed.stdout)}


def torch_only_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shared venv's interpreter; built by the first caller of the run."""
    root = run_tmp(tmp_path_factory)
    venv = root / "torch-only-venv"
    python = venv / "bin" / "python"
    with open(root / "torch-only-venv.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (venv / "built").exists():
            shutil.rmtree(venv, ignore_errors=True)  # a half-built one from an interrupted caller
            made = _run([sys.executable, "-m", "venv", str(venv)])
            assert made.returncode == 0, made.stderr[-2000:]
            version = torch.__version__.split("+")[0]
            installed = _run([str(python), "-m", "pip", "install", "--quiet", f"torch=={version}"])
            assert installed.returncode == 0, installed.stderr[-2000:]
            (venv / "built").touch()
    names = installed_names(python)
    assert "torch" in names and not names & OURS, names
    return python


def torch_only_copy(tmp_path_factory: pytest.TempPathFactory, name: str) -> Path:
    """A venv of its own that starts as the shared one: hard links, so it costs no copying."""
    shared = torch_only_venv(tmp_path_factory).parent.parent
    copy = tmp_path_factory.mktemp(name) / "venv"
    copied = _run(["cp", "-al", str(shared), str(copy)])
    assert copied.returncode == 0, copied.stderr
    (copy / "built").unlink()
    return copy / "bin" / "python"
