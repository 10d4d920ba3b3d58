"""The expected observations a store already holds are used without a thread beside the run."""

from __future__ import annotations

from pathlib import Path

from judge.authoring.package import Problem
from judge.core.verdicts import Verdict
from judge.expected import ExpectedStore
from tests.factories import judge, local_backend, make_package


def test_a_store_holds_what_it_computed_and_a_judgement_uses_it(tmp_path: Path) -> None:
    problem = Problem(make_package(tmp_path / "pkg"))
    store = ExpectedStore(tmp_path / "cache")
    backend = local_backend()
    assert store.at_hand(problem, backend) is None  # nothing computed yet: get runs beside
    first = judge(problem, "def f(x):\n    return x * 2\n", store)
    held = store.at_hand(problem, backend)
    assert held is not None and held is store.get(problem, backend)
    assert first.verdict == Verdict.AC
    second = judge(problem, "def f(x):\n    return x + x + 1\n", store)
    assert second.verdict == Verdict.WA
    assert store.at_hand(problem, backend) is held
