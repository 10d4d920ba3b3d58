"""Problem 205 through the real judge: the forbidden rotary helper is named, in-place edits are caught;
the mutants of the default-dtype factory and the bf16 upcast each fail the one case that checks
their promise; an odd head_dim is no longer a rule of its own (issue 29)."""

from __future__ import annotations

import pytest

from judge.authoring.package import Problem
from judge.core.verdicts import Verdict
from judge.expected import ExpectedStore
from tests.factories import failing_cases, judge_problem, mutant_source
from tests.paths import REPO_ROOT

PROBLEM = Problem(REPO_ROOT / "problems" / "205-rope")


def test_case_counts() -> None:
    cases = PROBLEM.cases
    assert sum(c.public for c in cases) == 3
    assert sum(not c.public for c in cases) >= 6
    assert {"edge_shapes", "inputs_unchanged", "backward", "apply_bf16"} <= {c.name for c in cases}
    assert {"frequencies_default_dtype", "backward_bf16"} <= {c.name for c in cases}
    assert "odd_head_dim_rejected" not in {c.name for c in cases}


@pytest.mark.parametrize(
    ("mutant_id", "case_name"),
    [
        ("rope_frequencies/0:drop-dtype", "frequencies_default_dtype"),  # inv_freq follows the default dtype
        ("apply_rope/3:drop-cast", "backward_bf16"),  # bf16 x by promotion: y exact, x.grad rounded twice
    ],
)
def test_former_survivors_fail_only_the_case_of_their_promise(mutant_id: str, case_name: str) -> None:
    assert list(failing_cases(PROBLEM, mutant_source(PROBLEM, mutant_id))) == [case_name]


def test_declared_equivalents_pass_every_case() -> None:
    # fp32 tables make .float() on their rows the rows themselves; an int64 arange promotes
    # to fp32 against the fp32 inv_freq with the same rounding.
    for mutant_id in ("rope_frequencies/2:drop-dtype", "apply_rope/0:drop-cast", "apply_rope/1:drop-cast"):
        assert failing_cases(PROBLEM, mutant_source(PROBLEM, mutant_id)) == {}


@pytest.mark.slow
def test_bf16_gradient_by_promotion_gets_its_hint(store: ExpectedStore) -> None:
    wrong = next(s for s in PROBLEM.solutions("wrong") if s.path.stem == "bf16_grad_two_roundings")
    report = judge_problem(PROBLEM, wrong.source(), store)
    failing = [c for c in report.cases if c.verdict != Verdict.AC]
    assert [c.name for c in failing] == ["backward_bf16"]
    assert failing[0].hint == wrong.hint()


@pytest.mark.slow
def test_onnx_rotary_embedding_is_forbidden(store: ExpectedStore) -> None:
    src = (
        PROBLEM.reference.source()
        + "\n\nimport torch.onnx.ops\n\n"
        + "def apply_rope(x, cos, sin, positions):\n"
        + "    half = cos.shape[-1] // 2\n"
        + "    pos = positions if positions.dim() == 2 else positions.expand(x.shape[0], -1)\n"
        + "    y = torch.onnx.ops.rotary_embedding(\n"
        + "        x.float().transpose(1, 2), cos[:, :half], sin[:, :half], pos,\n"
        + "        rotary_embedding_dim=2 * half,\n"
        + "    )\n"
        + "    return y.transpose(1, 2).to(x.dtype)\n"
    )
    report = judge_problem(PROBLEM, src, store)
    apply = next(c for c in report.cases if c.name == "apply_fp32")
    assert apply.verdict == Verdict.WA and "torch.onnx.ops.rotary_embedding" in apply.message
    # The tables are the learner's own and still pass.
    assert next(c for c in report.cases if c.name == "frequencies_table").verdict == Verdict.AC


@pytest.mark.slow
def test_writing_into_x_is_caught_only_where_x_is_reused(store: ExpectedStore) -> None:
    wrong = next(s for s in PROBLEM.solutions("wrong") if s.path.stem == "in_place_on_x")
    report = judge_problem(PROBLEM, wrong.source(), store)
    failing = {c.name: c for c in report.cases if c.verdict != Verdict.AC}
    assert set(failing) == {"backward", "inputs_unchanged", "relative_position"}
    assert "x_after_call" in failing["inputs_unchanged"].message
    assert failing["inputs_unchanged"].hint == wrong.hint()


# transformers' recipe as a learner porting it would write it (issue 29): its rotary embedding
# returns the tables in the model's dtype, and apply_rotary_pos_emb multiplies in that dtype.
TRANSFORMERS_RECIPE = """
import torch
from transformers.models.qwen3_5.modeling_qwen3_5 import rotate_half


def rope_frequencies(head_dim, max_pos, theta=10000.0):
    exponents = torch.arange(0, head_dim, 2, dtype=torch.int64).to(dtype=torch.float) / head_dim
    inv_freq = 1.0 / (theta**exponents)
    freqs = torch.arange(max_pos, dtype=torch.int64)[:, None].float() * inv_freq[None, :].float()
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos(), emb.sin()


def apply_rope(x, cos, sin, positions):
    c = cos[positions].to(x.dtype).unsqueeze(-2)
    s = sin[positions].to(x.dtype).unsqueeze(-2)
    rot = c.shape[-1]
    x_rot, x_pass = x[..., :rot], x[..., rot:]
    return torch.cat([(x_rot * c) + (rotate_half(x_rot) * s), x_pass], dim=-1)
"""


def test_transformers_recipe_differs_only_in_bf16() -> None:
    """The statement's "differs from transformers" note: the same results in fp32, and the bf16
    cases failed by products rounded in bf16."""
    failing = failing_cases(PROBLEM, TRANSFORMERS_RECIPE)
    assert set(failing) == {"apply_bf16", "decode_step_batched", "partial_rotary", "backward_bf16"}
