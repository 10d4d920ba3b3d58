"""Problem 208: the reference against torch's own attention, and precise mistakes through the judge."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from judge.authoring.mutation.generate import generate
from judge.authoring.package import Problem
from judge.core.casekit import Rng
from judge.core.verdicts import Verdict
from judge.expected import ExpectedStore
from tests.factories import failing_case_names, failing_cases, judge_problem, package_module, source_module
from tests.paths import REPO_ROOT

PROBLEM = Problem(REPO_ROOT / "problems" / "208-causal-attention")


def _wrong(stem: str) -> str:
    return next(s for s in PROBLEM.solutions("wrong") if s.path.stem == stem).source()


REF = package_module(PROBLEM, "reference.py", "ref_208")


def test_reference_matches_torch_sdpa_on_real_rows() -> None:
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(2, 3, 6, 8, generator=g) for _ in range(3))
    mask = torch.tensor([[True] * 6, [False, False, True, True, True, True]])
    causal = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    assert torch.allclose(REF.attention(q, k, v), causal, atol=1e-6)
    allowed = torch.ones(6, 6, dtype=torch.bool).tril() & mask[:, None, None, :]
    expected = F.scaled_dot_product_attention(q, k, v, attn_mask=allowed)
    got = REF.attention(q, k, v, mask)
    # Rows with a visible key agree with torch; the padded queries of row 1 are zeros, not NaN.
    assert torch.allclose(got[0], expected[0], atol=1e-6)
    assert torch.allclose(got[1, :, 2:], expected[1, :, 2:], atol=1e-6)
    assert torch.equal(got[1, :, :2], torch.zeros(3, 2, 8))


def test_statement_example() -> None:
    q = torch.zeros(1, 1, 4, 1)
    v = torch.tensor([1.0, 2.0, 3.0, 4.0]).view(1, 1, 4, 1)
    assert torch.allclose(REF.attention(q, q, v).flatten(), torch.tensor([1.0, 1.5, 2.0, 2.5]))
    padded = REF.attention(q, q, v, torch.tensor([[False, False, True, True]]))
    assert torch.allclose(padded.flatten(), torch.tensor([0.0, 0.0, 3.0, 3.5]))


def test_reference_gradients_are_finite_with_empty_rows() -> None:
    q, k, v = (torch.randn(1, 2, 4, 8, requires_grad=True) for _ in range(3))
    REF.attention(q, k, v, torch.tensor([[False, False, False, True]])).sum().backward()
    assert all(bool(torch.isfinite(t.grad).all()) for t in (q, k, v))


@pytest.mark.slow
def test_sdpa_is_forbidden(store: ExpectedStore) -> None:
    src = "import torch.nn.functional as F\n\n\ndef attention(q, k, v, padding_mask=None):\n"
    src += "    return F.scaled_dot_product_attention(q, k, v, is_causal=True)\n"
    report = judge_problem(PROBLEM, src, store)
    fp32 = next(c for c in report.cases if c.name == "causal_fp32")
    assert fp32.verdict == Verdict.WA and "scaled_dot_product_attention" in fp32.message


@pytest.mark.slow
def test_nan_gradients_fail_only_the_gradient_cases(store: ExpectedStore) -> None:
    report = judge_problem(PROBLEM, _wrong("additive_bias_nan_grads"), store)
    failing = {c.name for c in report.cases if c.verdict != Verdict.AC}
    assert failing == {"backward", "long_sequence"}
    case = next(c for c in report.cases if c.name == "backward")
    assert "NaN" in case.message and "nan_to_num" in case.hint


SDPA = """
import torch
import torch.nn.functional as F


def attention(q, k, v, padding_mask=None):
    seq = q.shape[-2]
    allowed = torch.ones(seq, seq, dtype=torch.bool, device=q.device).tril()
    if padding_mask is not None:
        allowed = allowed & padding_mask[:, None, None, :].bool()
    return F.scaled_dot_product_attention(q, k, v, attn_mask=allowed)
"""


def test_torch_sdpa_passes_every_case_in_process() -> None:
    """transformers' default attention path is torch's sdpa with a boolean mask (forbidden here,
    since it is the exercise): it gives empty rows zeros and rounds bf16 within 1 ulp of the
    reference, so the contract asks nothing of precision beyond it (issue 29)."""
    assert failing_cases(PROBLEM, SDPA) == {}


@pytest.mark.slow
def test_bf16_scores_fail_the_bf16_cases_by_ulps(store: ExpectedStore) -> None:
    report = judge_problem(PROBLEM, _wrong("bf16_math"), store)
    failing = {c.name for c in report.cases if c.verdict != Verdict.AC}
    assert {"bf16_inputs", "bf16_padded_long"} <= failing
    case = next(c for c in report.cases if c.name == "bf16_inputs")
    assert "more than 1 ulp" in case.message


def test_denominator_as_constant_in_saturated_rows_fails_only_the_sink_case() -> None:
    """Mutant 33:44:int+1 divides only where the sum exceeds 1: forward bit-identical, but where
    the fp32 sum rounds to exactly 1 (an attention sink) its gradients lose the softmax's
    centring term. Only the relative check of the unattended keys' gradients sees it."""
    mutant = next(m for m in generate(PROBLEM.reference.source()) if m.id == "attention/10:int+1")
    assert "total > 1" in mutant.source
    failing = failing_cases(PROBLEM, mutant.source)
    assert set(failing) == {"attention_sink_backward"}
    assert all("unattended_key_grads" in m for m in failing["attention_sink_backward"])


# Two mistakes no wrong solution lists, which used to be told uniform_empty_rows' hint ("you fill
# masked scores with a finite minimum"): for the lone padded token of single_token all three
# return v, the unpadded call's result. That value names a class of mistakes (the padding
# ignored), not one of them, and elsewhere each of the two is right where uniform_empty_rows is not.
MEMOISED_MASK = """
import math

import torch

_ALLOWED = {}


def attention(q, k, v, padding_mask=None):
    seq, head_dim = q.shape[-2], q.shape[-1]
    qf, kf, vf = q.float(), k.float(), v.float()
    scores = (qf @ kf.transpose(-2, -1)) / math.sqrt(head_dim)
    if seq not in _ALLOWED:  # memoised by length: the first call's padding sticks
        allowed = torch.ones(seq, seq, dtype=torch.bool).tril()
        if padding_mask is not None:
            allowed = allowed & padding_mask[:, None, None, :]
        _ALLOWED[seq] = allowed
    scores = scores.masked_fill(~_ALLOWED[seq], float("-inf"))
    row_max = scores.amax(dim=-1, keepdim=True)
    row_max = torch.where(torch.isfinite(row_max), row_max, torch.zeros_like(row_max))
    weights = torch.exp(scores - row_max)
    total = weights.sum(dim=-1, keepdim=True)
    weights = weights / torch.where(total > 0, total, torch.ones_like(total))
    return (weights @ vf).to(q.dtype)
"""
ONE_TOKEN_FAST_PATH = (
    "    if seq == 1:\n"
    "        return v.clone()  # one token attends to itself only (the padding forgotten)\n"
    "    # Everything in fp32"
)


@pytest.mark.slow
@pytest.mark.parametrize("mistake", ["memoised_mask", "one_token_fast_path"])
def test_mistakes_with_the_same_padded_token_are_not_told_another_ones_hint(
    store: ExpectedStore, mistake: str
) -> None:
    if mistake == "memoised_mask":
        source = MEMOISED_MASK
    else:
        source = PROBLEM.reference.source().replace("    # Everything in fp32", ONE_TOKEN_FAST_PATH, 1)
        assert "if seq == 1:" in source
    report = judge_problem(PROBLEM, source, store)
    by_name = {c.name: c for c in report.cases}
    assert by_name["single_token"].verdict == Verdict.WA
    uniform = _wrong("uniform_empty_rows")
    assert "finfo" in uniform
    shown = {c.name: c.hint.en for c in report.cases if c.hint}
    assert not [n for n, hint in shown.items() if hint in uniform], shown
    # No listed mistake is this one: nothing is named, and the diagnosis still says what it sees.
    assert shown == {}
    assert by_name["single_token"].diagnoses


@pytest.mark.slow
def test_the_finite_fill_is_still_told_its_hint_and_it_starts_with_the_symptom(store: ExpectedStore) -> None:
    report = judge_problem(PROBLEM, _wrong("uniform_empty_rows"), store)
    failing = [c for c in report.cases if c.verdict != Verdict.AC]
    assert failing and all(c.hint for c in failing)
    assert failing[0].hint.en.startswith("For a row with no visible key")
    assert failing[0].hint.zh.startswith("对于没有任何可见键的行")


# ---------------------------------------------------------------- state and layouts (version 3)


def test_a_mask_kept_per_length_fails_the_repeated_calls_on_the_last_call() -> None:
    # The mask kept per length with the padding of the call that built it: the last call of
    # each_call_its_own has the first call's length and a padding mask, and only it is wrong.
    failing = failing_case_names(PROBLEM, MEMOISED_MASK)
    assert "each_call_its_own" in failing
    ref = source_module("reference", PROBLEM.reference.source())
    impl = source_module("candidate", MEMOISED_MASK)
    case = next(c for c in PROBLEM.cases if c.name == "each_call_its_own")
    want, got = case.fn(ref, Rng(case.seed))["calls"], case.fn(impl, Rng(case.seed))["calls"]
    assert [bool(torch.equal(w, g)) for w, g in zip(want, got, strict=True)] == [True] * 4 + [False]


def test_the_nanogpt_buffer_grown_across_calls_is_right() -> None:
    # A causal mask cached independently of any call's data (sliced from the largest built) passes.
    nanogpt = next(s for s in PROBLEM.solutions("accepted") if s.path.stem == "nanogpt_tril_buffer")
    assert failing_case_names(PROBLEM, nanogpt.source()) == []


def test_a_view_that_needs_contiguous_q_fails_only_the_layout_case() -> None:
    head = "    seq, head_dim = q.shape[-2], q.shape[-1]\n"
    src = PROBLEM.reference.source().replace(
        head, head + "    q = q.view(q.shape)\n    k = k.view(-1, seq, head_dim).view(k.shape)\n"
    )
    assert "k.view(-1" in src
    assert failing_case_names(PROBLEM, src) == ["non_contiguous_inputs"]
