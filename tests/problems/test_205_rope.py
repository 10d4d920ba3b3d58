"""Problem 205 through the real judge: the forbidden rotary helper is named, in-place edits are caught."""

from __future__ import annotations

import pytest

from judge.expected import ExpectedStore
from judge.package import Problem
from judge.settings import REPO_ROOT
from judge.verdicts import Verdict
from tests.factories import judge_problem

PROBLEM = Problem(REPO_ROOT / "problems" / "205-rope")


def test_case_counts() -> None:
    cases = PROBLEM.cases
    assert sum(c.public for c in cases) == 3
    assert sum(not c.public for c in cases) >= 6
    assert {"edge_shapes", "inputs_unchanged", "backward", "apply_bf16"} <= {c.name for c in cases}


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
