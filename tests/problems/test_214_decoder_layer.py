"""Problem 214: the reference matches torch's own building blocks, and the state_dict contract holds."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from judge.authoring.package import Problem
from judge.core.casekit import Rng, load_params
from judge.core.verdicts import Verdict
from judge.expected import ExpectedStore
from tests.factories import failing_cases, judge_problem, package_module
from tests.paths import REPO_ROOT

PROBLEM = Problem(REPO_ROOT / "problems" / "214-decoder-layer")
CFG = {"dim": 24, "n_heads": 6, "n_kv_heads": 2, "head_dim": 5, "hidden": 40}


def test_reference_matches_torch_builtins() -> None:
    ref = package_module(PROBLEM, "reference.py", "reference")
    layer = ref.DecoderLayer(**CFG)
    weights = PROBLEM.cases_module.layer_weights(Rng(3), **CFG)
    load_params(layer, **weights)
    w = {k: v.double() for k, v in weights.items()}
    x = torch.randn(2, 7, CFG["dim"], dtype=torch.float64, generator=torch.Generator().manual_seed(0))

    def attn(u: torch.Tensor) -> torch.Tensor:
        b, s, _ = u.shape
        q = F.linear(u, w["self_attn.q_proj.weight"]).view(b, s, 6, 5).transpose(1, 2)
        k = F.linear(u, w["self_attn.k_proj.weight"]).view(b, s, 2, 5).transpose(1, 2)
        v = F.linear(u, w["self_attn.v_proj.weight"]).view(b, s, 2, 5).transpose(1, 2)
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        return F.linear(o.transpose(1, 2).reshape(b, s, 30), w["self_attn.o_proj.weight"])

    def mlp(u: torch.Tensor) -> torch.Tensor:
        gate = F.silu(F.linear(u, w["mlp.gate_proj.weight"]))
        return F.linear(gate * F.linear(u, w["mlp.up_proj.weight"]), w["mlp.down_proj.weight"])

    def norm(u: torch.Tensor, name: str) -> torch.Tensor:
        return F.rms_norm(u, (CFG["dim"],), 1 + w[name], eps=1e-6)

    h = x + attn(norm(x, "input_layernorm.weight"))
    expected = h + mlp(norm(h, "post_attention_layernorm.weight"))
    # The reference computes the norms and attention in fp32, so compare at fp32 precision.
    torch.testing.assert_close(layer(x.float()).double(), expected, rtol=1e-5, atol=1e-5)


def test_zero_output_projections_make_the_layer_the_identity() -> None:
    ref = package_module(PROBLEM, "reference.py", "reference")
    layer = ref.DecoderLayer(**CFG)
    with torch.no_grad():
        layer.self_attn.o_proj.weight.zero_()
        layer.mlp.down_proj.weight.zero_()
    x = torch.randn(2, 5, CFG["dim"])
    assert torch.equal(layer(x), x)


@pytest.mark.parametrize("persistent", [True, False])
def test_a_mask_buffer_must_not_enter_the_state_dict(persistent: bool) -> None:
    src = PROBLEM.reference.source()
    src = src.replace(
        "        self.o_proj = nn.Linear(n_heads * head_dim, dim, bias=False)\n",
        "        self.o_proj = nn.Linear(n_heads * head_dim, dim, bias=False)\n"
        "        self.register_buffer(\n"
        f"            'causal', torch.ones(64, 64, dtype=torch.bool).triu(1), persistent={persistent}\n"
        "        )\n",
    )
    assert "register_buffer" in src
    failing = failing_cases(PROBLEM, src)
    if persistent:
        assert set(failing) == {"parameters"}
        assert "self_attn.causal" in failing["parameters"][0]
    else:
        assert failing == {}


def test_starter_raises_not_implemented_everywhere() -> None:
    starter = package_module(PROBLEM, "starter.py", "starter")
    for c in PROBLEM.cases:
        with pytest.raises(NotImplementedError):
            c.fn(starter, Rng(c.seed))


@pytest.mark.slow
def test_residual_aliased_through_assignment_fails_the_untouched_case(store: ExpectedStore) -> None:
    """`h = x; h += ...` edits the caller's x just like `x += ...`."""
    src = PROBLEM.reference.source().replace(
        "        h = x + self.self_attn(self.input_layernorm(x))\n",
        "        h = x\n        h += self.self_attn(self.input_layernorm(x))\n",
    )
    assert "h += self.self_attn" in src
    report = judge_problem(PROBLEM, src, store)
    untouched = next(c for c in report.cases if c.name == "input_untouched")
    # The case compares x itself after the call (not a flag the code under test could patch).
    # This x holds x + attention only, the listed mistake's x + attention + mlp: the hint of
    # that mistake is not claimed on different data.
    assert untouched.verdict == Verdict.WA and "x_after_call" in untouched.message
    backward = next(c for c in report.cases if c.name == "backward")
    assert backward.verdict == Verdict.RE  # in place on a leaf that requires grad


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("xf = x.float()\n    return xf", "xf = x\n    return xf"),  # statistics in the input's dtype
        ("1.0 + self.weight.float()", "1.0 + self.weight"),  # 1 + w rounded to the module's dtype
    ],
    ids=["bf16_statistics", "weight_not_cast"],
)
def test_norm_rounding_in_bf16_is_caught_only_by_the_norm_probe(old: str, new: str) -> None:
    """Statistics or 1 + w in bf16: forward_bf16's tolerance absorbs it; bf16_norm_precision does not.
    The norm is problem 204's part; here a learner writes it inline, imprecisely, in its place."""
    norm = next(p for p in PROBLEM.part_problems if p.id == "204").reference.source()
    assert old in norm
    src = PROBLEM.reference.source().replace("from qwen.norm import RMSNorm\n", norm.replace(old, new))
    assert "from qwen.norm" not in src
    failing = failing_cases(PROBLEM, src)
    assert set(failing) == {"bf16_norm_precision"}
    assert any("attention_path" in m for m in failing["bf16_norm_precision"])
    assert any("mlp_path" in m for m in failing["bf16_norm_precision"])
