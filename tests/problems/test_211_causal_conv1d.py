"""Problem 211 through the real judge: forbidden convolutions are named, in-place state edits caught."""

from __future__ import annotations

import pytest

from judge.expected import ExpectedStore
from judge.package import Problem
from judge.settings import REPO_ROOT
from judge.verdicts import Verdict
from tests.factories import judge_problem

pytestmark = pytest.mark.slow

PROBLEM = Problem(REPO_ROOT / "problems" / "211-causal-conv1d")

ONE_SHOT_BODY = "    y = F.silu(z).to(x.dtype)\n"


def test_torch_conv1d_is_forbidden_as_the_same_object_as_f_conv1d(store: ExpectedStore) -> None:
    call = "torch.conv1d"
    src = PROBLEM.reference.source()
    assert ONE_SHOT_BODY in src
    src = src.replace(
        ONE_SHOT_BODY,
        f"    z = {call}(xpad.float(), weight.float()[:, None], bias, groups=x.shape[1])\n" + ONE_SHOT_BODY,
    )
    report = judge_problem(PROBLEM, src, store)
    case = next(c for c in report.cases if c.name == "conv_fp32")
    assert case.verdict == Verdict.WA and "torch.nn.functional.conv1d" in case.message


def test_in_place_state_update_fails_only_the_untouched_case(store: ExpectedStore) -> None:
    wrong = next(s for s in PROBLEM.solutions("wrong") if s.path.stem == "step_updates_state_in_place")
    report = judge_problem(PROBLEM, wrong.source(), store)
    failing = {c.name for c in report.cases if c.verdict != Verdict.AC}
    assert failing == {"inputs_untouched"}
    case = next(c for c in report.cases if c.name == "inputs_untouched")
    assert "state_after_step" in case.message and case.hint == wrong.hint()


def test_starter_scores_zero(store: ExpectedStore) -> None:
    report = judge_problem(PROBLEM, PROBLEM.starter.source(), store)
    assert report.verdict == Verdict.RE and report.score == 0
    assert "NotImplementedError" in report.cases[0].message
