"""Problem 208: the reference against torch's own attention, and precise mistakes through the judge."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from judge.expected import ExpectedStore
from judge.mutation.generate import generate
from judge.package import Problem
from judge.verdicts import Verdict
from tests.factories import failing_cases, judge_problem, package_module
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


@pytest.mark.slow
def test_bf16_weights_fail_only_the_bf16_cases_by_ulps(store: ExpectedStore) -> None:
    report = judge_problem(PROBLEM, _wrong("weights_rounded_to_bf16"), store)
    failing = {c.name for c in report.cases if c.verdict != Verdict.AC}
    assert failing == {"bf16_inputs", "bf16_padded_long"}
    case = next(c for c in report.cases if c.name == "bf16_inputs")
    assert "too many differ" in case.message and "fp32" in case.hint


def test_denominator_as_constant_in_saturated_rows_fails_only_the_sink_case() -> None:
    """Mutant 33:44:int+1 divides only where the sum exceeds 1: forward bit-identical, but where
    the fp32 sum rounds to exactly 1 (an attention sink) its gradients lose the softmax's
    centring term. Only the relative check of the unattended keys' gradients sees it."""
    mutant = next(m for m in generate(PROBLEM.reference.source()) if m.id == "33:44:int+1")
    assert "total > 1" in mutant.source
    failing = failing_cases(PROBLEM, mutant.source)
    assert set(failing) == {"attention_sink_backward"}
    assert all("unattended_key_grads" in m for m in failing["attention_sink_backward"])
