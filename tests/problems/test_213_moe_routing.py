"""Problem 213 beyond validate: where the shape-dependent mistakes show up, untied test inputs,
the default of norm_topk_prob, the in-place check, and moe_block against transformers' own
Qwen3.5-MoE sparse block (transformers is a development requirement, pinned in
requirements-dev.txt; nothing the judge ships imports it)."""

from __future__ import annotations

import copy

import pytest
import torch
from transformers import Qwen3_5MoeTextConfig
from transformers.models.qwen3_5_moe.modeling_qwen3_5_moe import Qwen3_5MoeSparseMoeBlock

from judge.authoring.mutation.generate import generate
from judge.authoring.package import Problem
from judge.core.casekit import Rng
from judge.core.verdicts import Verdict
from judge.expected import ExpectedStore
from tests.factories import judge_problem, package_module
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
    # The statement's example already lists its two experts in index order; route_calls and
    # non_contiguous_inputs call route too.
    assert failing == ROUTE_CASES - {"statement_example"} | {"route_calls", "non_contiguous_inputs"}
    assert all(c.hint == wrong.hint() for c in report.cases if c.verdict != Verdict.AC)


@pytest.mark.slow
def test_a_default_of_false_is_caught_by_the_default_case(store: ExpectedStore) -> None:
    # Every other case passes norm_topk_prob explicitly, so only this one sees the default.
    mutant = next(m for m in generate(PROBLEM.reference.source()) if m.id == "route/def:bool")
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


@pytest.mark.slow
def test_rounding_twice_in_the_block_is_caught_only_in_bf16(store: ExpectedStore) -> None:
    # moe_forward on the bf16 x rounds the routed sum, then the shared expert is added.
    wrong = _wrong("rounds_twice")
    report = judge_problem(PROBLEM, wrong.source(), store)
    failing = [c for c in report.cases if c.verdict != Verdict.AC]
    # block_calls' third call is a bf16 block.
    assert [c.name for c in failing] == ["block_bf16", "block_calls"]
    assert all("ulp" in c.message and c.hint == wrong.hint() for c in failing)


def _hf_block(seed: int) -> Qwen3_5MoeSparseMoeBlock:
    """A tiny Qwen3.5-MoE sparse block (8 experts at top-2, a shared expert) with random weights."""
    config = Qwen3_5MoeTextConfig(
        hidden_size=16,
        num_experts=8,
        num_experts_per_tok=2,
        moe_intermediate_size=12,
        shared_expert_intermediate_size=20,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
        head_dim=8,
        vocab_size=32,
        experts_implementation="eager",  # type: ignore[call-arg]  # transformers' own loop, no kernel
    )
    block = Qwen3_5MoeSparseMoeBlock(config)  # type: ignore[no-untyped-call]
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in block.named_parameters():
            # A sharper router (x2) so the top 2 are clear; the rest scaled like a trained layer.
            scale = (2.0 if name == "gate.weight" else 1.0) * p.shape[-1] ** -0.5
            p.copy_(torch.randn(p.shape, generator=g) * scale)
    return block


def _ours(block: Qwen3_5MoeSparseMoeBlock, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The reference's moe_block on the block's weights, passed by transformers' names."""
    ref = package_module(PROBLEM, "reference.py", "ref_213_vs_hf")
    w = {n: p.detach() for n, p in block.named_parameters()}
    return ref.moe_block(  # type: ignore[no-any-return]
        x,
        w["gate.weight"],
        w["experts.gate_up_proj"],
        w["experts.down_proj"],
        w["shared_expert.gate_proj.weight"],
        w["shared_expert.up_proj.weight"],
        w["shared_expert.down_proj.weight"],
        w["shared_expert_gate.weight"],
        block.gate.top_k,
    )


@pytest.mark.parametrize("seed", range(5))
def test_moe_block_matches_transformers_sparse_moe_block(seed: int) -> None:
    """Measured over 20 seeds (torch 2.13 CPU): in fp32 the reference and transformers'
    Qwen3_5MoeSparseMoeBlock agree bit for bit (the same router, the same per-expert
    products, the same sigmoid-gated shared expert), so the test asks for equality; a missing
    shared expert or sigmoid moves y by 0.1 or more. In bf16 transformers rounds after every
    step; ours is its fp32 result on the same bf16 numbers, rounded once."""
    block = _hf_block(seed)
    x = torch.randn(3, 7, 16, generator=torch.Generator().manual_seed(100 + seed))
    with torch.no_grad():
        want = block(x)
        hf_logits, _, _ = block.gate(x.reshape(-1, 16))
    y, logits = _ours(block, x)
    assert y.shape == want.shape == (3, 7, 16)
    assert torch.equal(y, want)
    assert torch.equal(logits, hf_logits)
    # The shared expert matters here: leaving it out would move y by more than 0.1.
    with torch.no_grad():
        shared = torch.sigmoid(block.shared_expert_gate(x)) * block.shared_expert(x)
    assert float(shared.abs().max()) > 0.1

    # bf16 weights and input: ours is transformers' fp32 block on those same bf16 values,
    # rounded once, where transformers' own bf16 block rounds after every step.
    block_bf16 = copy.deepcopy(block).to(torch.bfloat16)
    x_bf16 = x.bfloat16()
    y_bf16, _ = _ours(block_bf16, x_bf16)
    with torch.no_grad():
        once = copy.deepcopy(block_bf16).float()(x_bf16.float()).bfloat16()
        stepwise = block_bf16(x_bf16)
    assert y_bf16.dtype == torch.bfloat16
    assert torch.equal(y_bf16, once)
    assert not torch.equal(y_bf16, stepwise)
