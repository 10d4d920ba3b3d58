"""Problem 206 through the real judge: case counts and the bf16 gradient case."""

from __future__ import annotations

import pytest

from judge.expected import ExpectedStore
from judge.package import Problem
from judge.settings import REPO_ROOT
from judge.verdicts import Verdict
from tests.factories import judge_problem

PROBLEM = Problem(REPO_ROOT / "problems" / "206-swiglu")


def test_case_counts() -> None:
    cases = PROBLEM.cases
    assert [c.name for c in cases if c.public] == ["parameters", "worked_example", "forward_fp32"]
    assert sum(not c.public for c in cases) >= 6


@pytest.mark.slow
def test_fp32_output_from_a_bf16_module_is_a_dtype_error(store: ExpectedStore) -> None:
    # Computing in fp32 is fine; forgetting to round back to the module's dtype is not.
    src = PROBLEM.reference.source().replace(
        "return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))",
        "xf = x.float()\n"
        "        g = F.linear(xf, self.gate_proj.weight.float())\n"
        "        u = F.linear(xf, self.up_proj.weight.float())\n"
        "        return F.linear(F.silu(g) * u, self.down_proj.weight.float())",
    )
    assert "xf = x.float()" in src
    report = judge_problem(PROBLEM, src, store)
    failing = {c.name: c for c in report.cases if c.verdict != Verdict.AC}
    assert set(failing) == {"forward_bf16", "backward_bf16"}
    assert "dtype" in failing["backward_bf16"].message
