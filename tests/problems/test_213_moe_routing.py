"""Problem 213 beyond validate: where the shape-dependent mistakes show up, untied test inputs,
the default of norm_topk_prob and the in-place check."""

from __future__ import annotations

import pytest
import torch

from judge.casekit import Rng
from judge.expected import ExpectedStore
from judge.mutation.generate import generate
from judge.package import Problem
from judge.verdicts import Verdict
from tests.factories import judge_problem
from tests.paths import REPO_ROOT

PROBLEM = Problem(REPO_ROOT / "problems" / "213-moe-routing")
ROUTE_CASES = {
    "statement_example",
    "route_fp32",
    "route_flags",
    "route_default_renormalises",
    "route_bf16_logits",
}


def _wrong(stem: str):  # type: ignore[no-untyped-def]
    return next(s for s in PROBLEM.solutions("wrong") if s.path.stem == stem)


def test_case_inputs_have_no_near_ties() -> None:
    cases = PROBLEM.cases_module
    rng = Rng(7)
    logits = cases.make_logits(rng, 50, 16, dtype=torch.bfloat16)
    gaps = logits.double().sort(dim=-1).values.diff(dim=-1)
    assert float(gaps.min()) > cases.GAP
    x, router, _, _ = cases.moe_inputs(rng, tokens=40, dim=16, n_experts=32, inter=8, top_k=4)
    top = (x.double() @ router.double().T).sort(dim=-1, descending=True).values[:, :5]
    assert float((top[:, :-1] - top[:, 1:]).min()) > cases.GAP


@pytest.mark.slow
def test_transposed_router_is_a_shape_error_except_when_square(store: ExpectedStore) -> None:
    wrong = _wrong("router_transposed")
    report = judge_problem(PROBLEM, wrong.source(), store)
    by_name = {c.name: c for c in report.cases}
    square = by_name["moe_square_router"]
    assert square.verdict == Verdict.WA and square.hint == wrong.hint()
    fp32 = by_name["moe_fp32"]
    assert fp32.verdict == Verdict.RE and "shapes cannot be multiplied" in fp32.message
    assert all(by_name[n].verdict == Verdict.AC for n in ROUTE_CASES)


@pytest.mark.slow
def test_expert_order_mistake_fails_only_route_cases(store: ExpectedStore) -> None:
    wrong = _wrong("sorted_by_expert_index")
    report = judge_problem(PROBLEM, wrong.source(), store)
    failing = {c.name for c in report.cases if c.verdict != Verdict.AC}
    # The statement's example already lists its two experts in index order.
    assert failing == ROUTE_CASES - {"statement_example"}
    assert all(c.hint == wrong.hint() for c in report.cases if c.verdict != Verdict.AC)


@pytest.mark.slow
def test_a_default_of_false_is_caught_by_the_default_case(store: ExpectedStore) -> None:
    # Every other case passes norm_topk_prob explicitly, so only this one sees the default.
    mutant = next(m for m in generate(PROBLEM.reference.source()) if m.id == "7:74:bool")
    assert mutant.change == "True → False" and "def route" in PROBLEM.reference.source().splitlines()[6]
    report = judge_problem(PROBLEM, mutant.source, store)
    failing = [c.name for c in report.cases if c.verdict != Verdict.AC]
    assert failing == ["route_default_renormalises"]


@pytest.mark.slow
def test_accumulating_into_x_shows_the_changed_x(store: ExpectedStore) -> None:
    wrong = _wrong("index_add_into_x")
    report = judge_problem(PROBLEM, wrong.source(), store)
    untouched = next(c for c in report.cases if c.name == "inputs_untouched")
    assert untouched.verdict == Verdict.WA and "x_after_call" in untouched.message
    assert "router_weight_after_call" not in untouched.message
