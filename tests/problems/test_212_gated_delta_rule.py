"""Problem 212 through the real judge: bf16 maths and in-place state edits are caught where they should be."""

from __future__ import annotations

import pytest

from judge.expected import ExpectedStore
from judge.package import Problem
from judge.settings import REPO_ROOT
from judge.verdicts import Verdict
from tests.factories import judge_problem

pytestmark = pytest.mark.slow

PROBLEM = Problem(REPO_ROOT / "problems" / "212-gated-delta-rule")


def _wrong(stem: str):  # type: ignore[no-untyped-def]
    return next(s for s in PROBLEM.solutions("wrong") if s.path.stem == stem)


def test_bf16_recurrence_is_caught_only_by_the_bf16_case(store: ExpectedStore) -> None:
    wrong = _wrong("math_in_bf16")
    report = judge_problem(PROBLEM, wrong.source(), store)
    failing = [c for c in report.cases if c.verdict != Verdict.AC]
    assert [c.name for c in failing] == ["bf16"]
    assert "final_state" in failing[0].message and failing[0].hint == wrong.hint()


def test_in_place_initial_state_is_caught_and_explained(store: ExpectedStore) -> None:
    wrong = _wrong("updates_initial_state_in_place")
    report = judge_problem(PROBLEM, wrong.source(), store)
    by_name = {c.name: c for c in report.cases}
    assert by_name["inputs_untouched"].verdict == Verdict.WA
    assert "initial_state_after_call" in by_name["inputs_untouched"].message
    assert by_name["inputs_untouched"].hint == wrong.hint()
    # Autograd refuses the in-place edit of a leaf that requires grad.
    assert by_name["backward"].verdict == Verdict.RE
    assert by_name["fp32_basic"].verdict == Verdict.AC


def test_starter_scores_zero(store: ExpectedStore) -> None:
    report = judge_problem(PROBLEM, PROBLEM.starter.source(), store)
    assert report.verdict == Verdict.RE and report.score == 0
    assert "NotImplementedError" in report.cases[0].message
