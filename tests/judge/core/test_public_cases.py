"""judge.core.public_cases: what a job whose output the learner reads may hold of cases.py."""

from __future__ import annotations

import types
from pathlib import Path

import pytest

from judge.authoring.package import Problem
from judge.core.casekit import collect_cases
from judge.core.public_cases import public_cases_source
from tests.paths import REPO_ROOT

PACKAGES = sorted(p for p in (REPO_ROOT / "problems").iterdir() if (p / "problem.toml").is_file())


@pytest.mark.parametrize("folder", PACKAGES, ids=lambda p: p.name)
def test_every_shipped_package_keeps_exactly_its_public_cases(folder: Path) -> None:
    """A Run and the public half of a Submit run this text: a public case it lost would fail
    every learner (the runner refuses a job naming a case it does not define), a hidden one it
    kept would be readable by their code."""
    problem = Problem(folder)
    module = types.ModuleType("cases")
    exec(compile(public_cases_source(problem.read("cases.py")), "cases.py", "exec"), module.__dict__)
    kept = {c.name for c in collect_cases(module)}
    assert kept == {c.name for c in problem.cases if c.public}


def test_a_constant_only_hidden_cases_use_goes_with_them() -> None:
    source = """
import torch
from judge.core.casekit import case

SHAPE: tuple[int, int] = (4, 8)
HIDDEN_SHAPE: tuple[int, int] = (3, 5)
SECRET_SCALE = 8675.309
a, b = 1, 2  # a tuple target binds several names: kept, as anything not plainly a definition

@case(points=1, public=True)
def shown(impl, rng):
    return {"y": impl.f(rng.normal(*SHAPE))}

@case(points=1)
def hidden(impl, rng):
    return {"y": impl.f(rng.normal(*HIDDEN_SHAPE) * SECRET_SCALE)}
"""
    kept = public_cases_source(source)
    assert "SHAPE: tuple[int, int] = (4, 8)" in kept and "a, b = (1, 2)" in kept
    for gone in ("HIDDEN_SHAPE", "SECRET_SCALE", "8675", "def hidden"):
        assert gone not in kept
