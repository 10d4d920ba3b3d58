"""Problem 209: the reference against torch's GQA attention, and precise mistakes through the judge."""

from __future__ import annotations

import dataclasses

import pytest
import torch
import torch.nn.functional as F

from judge.authoring.package import Problem
from judge.core.grading import judge_source
from judge.core.verdicts import Verdict
from judge.expected import ExpectedStore
from tests.factories import judge_problem, package_module, shared_backend
from tests.paths import REPO_ROOT

PROBLEM = Problem(REPO_ROOT / "problems" / "209-gated-gqa")


REF = package_module(PROBLEM, "reference.py", "ref_209")
CASES = package_module(PROBLEM, "cases.py", "cases_209")


def test_reference_matches_a_layer_built_on_torch_gqa() -> None:
    torch.manual_seed(0)
    b, t, dim, h, kvh, d, r = 2, 6, 40, 6, 2, 8, 4
    m = REF.GatedAttention(dim, h, kvh, d)
    with torch.no_grad():
        m.q_norm.weight.normal_(0.5, 0.3)
        m.k_norm.weight.normal_(0.5, 0.3)
    cos, sin = CASES.rope_table(r, t)
    x = torch.randn(b, t, dim)

    def norm(z: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        return F.rms_norm(z, (d,), 1 + w, 1e-6)

    def rope(z: torch.Tensor) -> torch.Tensor:
        rot, rest = z[..., :r], z[..., r:]
        half = torch.cat([-rot[..., r // 2 :], rot[..., : r // 2]], dim=-1)
        return torch.cat([rot * cos + half * sin, rest], dim=-1)

    qg = m.q_proj(x).view(b, t, h, 2 * d)
    q = rope(norm(qg[..., :d], m.q_norm.weight).transpose(1, 2))
    k = rope(norm(m.k_proj(x).view(b, t, kvh, d), m.k_norm.weight).transpose(1, 2))
    v = m.v_proj(x).view(b, t, kvh, d).transpose(1, 2)
    out = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
    out = out.transpose(1, 2).reshape(b, t, h * d) * torch.sigmoid(qg[..., d:].reshape(b, t, h * d))
    with torch.no_grad():
        assert torch.allclose(m(x, cos, sin), m.o_proj(out), atol=1e-5)


def test_statement_example() -> None:
    torch.manual_seed(0)
    m = REF.GatedAttention(dim=48, n_heads=8, n_kv_heads=2, head_dim=16)
    shapes = {n: tuple(p.shape) for n, p in m.named_parameters()}
    assert shapes == {
        "q_proj.weight": (256, 48),
        "k_proj.weight": (32, 48),
        "v_proj.weight": (32, 48),
        "o_proj.weight": (48, 128),
        "q_norm.weight": (16,),
        "k_norm.weight": (16,),
    }
    x = torch.randn(1, 1, 48)
    gate = m.q_proj(x).view(1, 1, 8, 32)[..., 16:]
    v = m.v_proj(x).view(1, 1, 2, 16).repeat_interleave(4, dim=2)
    expected = m.o_proj((v * torch.sigmoid(gate)).reshape(1, 1, 128))
    assert torch.allclose(m(x, torch.ones(1, 4), torch.zeros(1, 4)), expected, atol=1e-6)


@pytest.mark.slow
def test_tiled_kv_heads_pass_mha_and_mqa_but_not_groups(store: ExpectedStore) -> None:
    wrong = next(s for s in PROBLEM.solutions("wrong") if s.path.stem == "kv_heads_tiled")
    report = judge_problem(PROBLEM, wrong.source(), store)
    verdicts = {c.name: c.verdict for c in report.cases}
    assert verdicts["mha"] == verdicts["mqa"] == verdicts["parameters"] == Verdict.AC
    assert verdicts["gqa_fp32"] == verdicts["wide_groups"] == Verdict.WA
    gqa = next(c for c in report.cases if c.name == "gqa_fp32")
    assert "repeat_interleave" in gqa.hint


@pytest.mark.slow
def test_sdpa_is_forbidden(store: ExpectedStore) -> None:
    src = PROBLEM.reference.source().replace(
        "out = attention(q, k, v)",
        "out = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)",
    )
    assert "scaled_dot_product_attention(q" in src
    report = judge_problem(PROBLEM, src, store)
    case = next(c for c in report.cases if c.name == "gqa_fp32")
    assert case.verdict == Verdict.WA and "scaled_dot_product_attention" in case.message


@pytest.mark.slow
@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("xf = x.float()\n    return xf", "xf = x\n    return xf"),  # statistics in the input's dtype
        ("1.0 + self.weight.float()", "1.0 + self.weight"),  # 1 + w rounded to the module's dtype
    ],
    ids=["bf16_statistics", "weight_not_cast"],
)
def test_norm_precision_is_caught_by_the_direct_norm_case(store: ExpectedStore, old: str, new: str) -> None:
    # The layer's bf16 tolerance admits transformers' order, and with it these norms; calling
    # q_norm and k_norm on their own shows them. The norm is the part from problem 204: here
    # that part is a learner's imprecise one (as on the site, where the part is their own).
    parts = PROBLEM.reference_parts()
    norm = next(p for p in parts if p.problem == "204")
    assert norm.source is not None and old in norm.source
    imprecise = dataclasses.replace(norm, source=norm.source.replace(old, new), origin="file")
    parts = [imprecise if p is norm else p for p in parts]
    report = judge_source(PROBLEM, PROBLEM.reference.source(), shared_backend(), store, parts=parts)
    assert {c.name for c in report.cases if c.verdict != Verdict.AC} == {"qk_norm_direct"}
