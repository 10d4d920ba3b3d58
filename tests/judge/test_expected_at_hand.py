"""The expected observations a store already holds are used without a thread beside the run;
how they are put together from a trusted run."""

from __future__ import annotations

from pathlib import Path

import pytest

from judge.authoring.package import Problem
from judge.core.results import Expected, SolutionRun, WrongSolution
from judge.core.texts import Text
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


def test_expected_keeps_the_reference_first_and_the_known_mistakes_last() -> None:
    """validate runs the starter and the accepted solutions between them in the same process."""
    ref, starter, accepted, wrong = (SolutionRun(load_status="ok") for _ in range(4))
    hint = Text("乘了 3", "You multiplied by 3.")
    expected = Expected.from_runs([ref, starter, accepted, wrong], [("wrong/times_three", hint)])
    assert expected.reference is ref
    assert expected.wrong == [WrongSolution("wrong/times_three", hint, wrong)]
    # With no known mistake nothing after the reference is one (not the whole run).
    assert Expected.from_runs([ref, starter, accepted], []).wrong == []
    with pytest.raises(ValueError):
        Expected.from_runs([ref], [("wrong/times_three", hint)])
