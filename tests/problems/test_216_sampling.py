"""Problem 216 through the real judge: exact draws, partial credit for the right distribution."""

from __future__ import annotations

import pytest

from judge.expected import ExpectedStore
from judge.package import Problem
from judge.settings import REPO_ROOT
from judge.verdicts import Verdict
from tests.factories import judge_problem

pytestmark = pytest.mark.slow

PROBLEM = Problem(REPO_ROOT / "problems" / "216-sampling")

EXACT_DRAWS = {"sample_fixed_seed", "greedy", "sample_bf16", "inputs_not_modified"}


def _wrong(stem: str) -> str:
    return next(s for s in PROBLEM.solutions("wrong") if s.path.stem == stem).source()


@pytest.mark.parametrize("stem", ["global_rng", "samples_in_sorted_order"])
def test_right_distribution_wrong_draws(stem: str, store: ExpectedStore) -> None:
    report = judge_problem(PROBLEM, _wrong(stem), store)
    failing = {c.name for c in report.cases if c.verdict != Verdict.AC}
    # The frequencies are right, so sample_distribution passes; only the exact ids differ.
    assert failing == EXACT_DRAWS
    hinted = next(c for c in report.cases if c.name == "sample_fixed_seed")
    assert "generator" in hinted.hint


def test_float64_filters_draw_the_same_tokens(store: ExpectedStore) -> None:
    src = (
        PROBLEM.reference.source()
        .replace("x = logits.float() / temperature", "x = (logits.double() / temperature).float()")
        .replace(
            "probs = torch.softmax(filter_logits(logits, temperature, top_k, top_p), dim=-1)",
            "probs = torch.softmax(filter_logits(logits, temperature, top_k, top_p).double(), -1).float()",
        )
    )
    assert "double" in src and ".double(), -1).float()" in src
    report = judge_problem(PROBLEM, src, store)
    assert report.verdict == Verdict.AC, [
        (c.name, c.message) for c in report.cases if c.verdict != Verdict.AC
    ]


def test_starter_scores_zero_with_readable_errors(store: ExpectedStore) -> None:
    report = judge_problem(PROBLEM, PROBLEM.starter.source(), store)
    assert report.verdict == Verdict.RE and report.score == 0
    assert "NotImplementedError" in report.cases[0].message
