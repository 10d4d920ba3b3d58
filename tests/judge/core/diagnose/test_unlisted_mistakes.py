"""The diagnosers on mistakes of our own that no package lists, judged as a learner's code is.

Each entry is a realistic slip written by editing a shipped reference; no wrong solution of the
package matches it, so whatever the learner is told comes from the diagnosers alone."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from judge.authoring.package import Problem
from judge.core.verdicts import Verdict
from judge.expected import ExpectedStore
from tests.factories import judge_problem
from tests.paths import REPO_ROOT

pytestmark = pytest.mark.slow


@dataclass(frozen=True)
class Slip:
    name: str
    problem: str
    old: str  # text of the reference ...
    new: str  # ... replaced by the slip
    case: str  # a failing case whose diagnoses must include `kind`
    kind: str


SLIPS = [
    Slip(
        "no_causal_mask",
        "208-causal-attention",
        "dtype=torch.bool, device=q.device).tril()",
        "dtype=torch.bool, device=q.device)",
        "causal_fp32",
        "right_only_at_last",
    ),
    Slip(
        "linear_with_its_default_bias",
        "214-decoder-layer",
        "self.q_proj = nn.Linear(dim, n_heads * head_dim, bias=False)",
        "self.q_proj = nn.Linear(dim, n_heads * head_dim)",
        "parameters",
        "extra_bias",
    ),
    Slip(
        "temperature_zero_let_through",
        "216-sampling",
        "if temperature <= 0:",
        "if temperature < 0:",
        "temperature_not_positive",
        "not_rejected",
    ),
    Slip(
        "positions_from_one",
        "205-rope",
        "torch.arange(max_pos, dtype=torch.float32)",
        "torch.arange(1, max_pos + 1, dtype=torch.float32)",
        "frequencies_table",
        "shifted",
    ),
]


@pytest.mark.parametrize("slip", SLIPS, ids=[s.name for s in SLIPS])
def test_an_unlisted_mistake_is_explained(slip: Slip, store: ExpectedStore) -> None:
    problem = Problem(REPO_ROOT / "problems" / slip.problem)
    source = problem.reference.source()
    assert slip.old in source, "the reference changed: update the slip"
    report = judge_problem(problem, source.replace(slip.old, slip.new), store)
    by_name = {c.name: c for c in report.cases}
    assert slip.case in by_name, sorted(by_name)
    case = by_name[slip.case]
    assert case.verdict == Verdict.WA
    assert not case.hint, "a listed mistake matched: this slip is not unlisted"
    assert slip.kind in [d.kind for d in case.diagnoses], [d.kind for d in case.diagnoses]
