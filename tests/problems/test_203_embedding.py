"""Problem 203 through the real judge: forbidden lookups are named, precise mistakes fail precise cases."""

from __future__ import annotations

import pytest

from judge.expected import ExpectedStore
from judge.package import Problem
from judge.settings import REPO_ROOT
from judge.verdicts import Verdict
from tests.factories import judge_problem

pytestmark = pytest.mark.slow

PROBLEM = Problem(REPO_ROOT / "problems" / "203-embedding")


def _wrong(stem: str) -> str:
    return next(s for s in PROBLEM.solutions("wrong") if s.path.stem == stem).source()


def test_functional_embedding_is_forbidden(store: ExpectedStore) -> None:
    src = PROBLEM.reference.source().replace(
        "return self.weight[ids]", "return torch.nn.functional.embedding(ids, self.weight)"
    )
    assert "functional.embedding" in src
    report = judge_problem(PROBLEM, src, store)
    lookup = next(c for c in report.cases if c.name == "lookup_fp32")
    assert lookup.verdict == Verdict.WA and "torch.nn.functional.embedding" in lookup.message
    # The head does not use the lookup, so the logits cases still pass.
    assert next(c for c in report.cases if c.name == "logits_fp32").verdict == Verdict.AC


def test_nn_embedding_module_is_forbidden(store: ExpectedStore) -> None:
    src = PROBLEM.reference.source().replace(
        "self.weight = nn.Parameter(torch.empty(vocab_size, dim))",
        "self.table = nn.Embedding(vocab_size, dim)\n        self.weight = self.table.weight",
    )
    assert "nn.Embedding" in src
    report = judge_problem(PROBLEM, src, store)
    init = next(c for c in report.cases if c.name == "init")
    assert init.verdict == Verdict.WA and "torch.nn.Embedding" in init.message


def test_bf16_logits_are_caught_only_where_the_inputs_are_bf16(store: ExpectedStore) -> None:
    report = judge_problem(PROBLEM, _wrong("logits_rounded_to_bf16"), store)
    failing = {c.name for c in report.cases if c.verdict != Verdict.AC}
    assert failing == {"logits_bf16"}
    case = next(c for c in report.cases if c.name == "logits_bf16")
    assert "bf16_h_bf16_weight" in case.message and "fp32" in case.hint


def test_detached_head_fails_only_the_gradient(store: ExpectedStore) -> None:
    report = judge_problem(PROBLEM, _wrong("head_detached"), store)
    failing = [c for c in report.cases if c.verdict != Verdict.AC]
    assert [c.name for c in failing] == ["tied_gradient"]
    assert "grads.weight" in failing[0].message
    assert report.score == 100 - failing[0].max_score


def test_starter_scores_zero_with_readable_errors(store: ExpectedStore) -> None:
    report = judge_problem(PROBLEM, PROBLEM.starter.source(), store)
    assert report.verdict == Verdict.RE and report.score == 0
    assert "NotImplementedError" in report.cases[0].message
