"""Problem 204 through the real judge: other correct styles pass, each known mistake gets its hint."""

from __future__ import annotations

from pathlib import Path

import pytest

from judge.authoring.package import Problem
from judge.core.verdicts import Verdict
from judge.expected import ExpectedStore
from tests.factories import failing_cases, judge_problem, mutant_source
from tests.paths import REPO_ROOT

pytestmark = pytest.mark.slow

PROBLEM = Problem(REPO_ROOT / "problems" / "204-rmsnorm")


@pytest.mark.parametrize("solution", PROBLEM.solutions("accepted"), ids=lambda s: s.path.stem)
def test_accepted_formulations_get_ac(solution, store: ExpectedStore) -> None:  # type: ignore[no-untyped-def]
    report = judge_problem(PROBLEM, solution.source(), store)
    assert report.verdict == Verdict.AC, [
        (c.name, c.message) for c in report.cases if c.verdict != Verdict.AC
    ]
    assert report.score == 100


@pytest.mark.parametrize("solution", PROBLEM.solutions("wrong"), ids=lambda s: s.path.stem)
def test_each_mistake_gets_wa_with_its_hint(solution, store: ExpectedStore) -> None:  # type: ignore[no-untyped-def]
    report = judge_problem(PROBLEM, solution.source(), store)
    assert report.verdict == Verdict.WA
    failing = [c for c in report.cases if c.verdict != Verdict.AC]
    assert failing and all(c.verdict == Verdict.WA for c in failing)
    assert any(c.hint == solution.hint() for c in failing)


def test_bf16_statistics_are_caught_only_by_ulp_cases(store: ExpectedStore) -> None:
    wrong = next(s for s in PROBLEM.solutions("wrong") if s.path.stem == "stats_in_input_dtype")
    report = judge_problem(PROBLEM, wrong.source(), store)
    failing = {c.name for c in report.cases if c.verdict != Verdict.AC}
    # repeated_calls (default tolerances) fails it on its fp16 call alone: fp16 statistics are
    # 2 ulps off, past fp16's rtol 1e-3, while its bf16 call passes like every non-ulp case.
    assert failing == {"rmsnorm_bf16", "rmsnorm_fp16_large", "gated_bf16", "mixed_dtypes", "repeated_calls"}
    repeated = next(c for c in report.cases if c.name == "repeated_calls")
    assert "calls[2]" in repeated.message and "calls[1]" not in repeated.message
    bf16 = next(c for c in report.cases if c.name == "rmsnorm_bf16")
    assert "ulp" in bf16.message and "fp32" in bf16.hint


def test_gate_silu_in_bf16_is_caught_only_by_an_fp32_x_with_a_bf16_gate(store: ExpectedStore) -> None:
    # The surviving mutant of version 1: gate.float() left out, so silu runs on the bf16 gate.
    # A bf16 output hides it within an ulp; an fp32 output keeps it.
    wrong = next(s for s in PROBLEM.solutions("wrong") if s.path.stem == "gate_silu_in_input_dtype")
    report = judge_problem(PROBLEM, mutant_source(PROBLEM, "GatedRMSNorm.forward/0:drop-cast#2"), store)
    failing = [c for c in report.cases if c.verdict != Verdict.AC]
    assert [c.name for c in failing] == ["mixed_dtypes"]
    assert "fp32_x_bf16_gate" in failing[0].message and failing[0].hint == wrong.hint()


def test_weight_cast_is_declared_equivalent_because_promotion_is_exact() -> None:
    # fp32 normalised x times a bf16 weight promotes the weight to fp32 exactly.
    assert failing_cases(PROBLEM, mutant_source(PROBLEM, "GatedRMSNorm.forward/0:drop-cast")) == {}


def test_forbidden_builtin_is_named(tmp_path: Path, store: ExpectedStore) -> None:
    src = PROBLEM.reference.source().replace(
        "return (_normalize_fp32(x, self.eps) * scale).to(x.dtype)",
        "return F.rms_norm(x, (x.shape[-1],), 1 + self.weight, self.eps)",
    )
    assert "F.rms_norm" in src
    report = judge_problem(PROBLEM, src, store)
    assert report.verdict == Verdict.WA
    rms = next(c for c in report.cases if c.name == "rmsnorm_fp32")
    assert "torch.nn.functional.rms_norm" in rms.message


def test_nn_rmsnorm_class_is_forbidden_under_every_alias(store: ExpectedStore) -> None:
    src = (
        "from torch.nn.modules.normalization import RMSNorm as Builtin\n"
        + PROBLEM.reference.source()
        + "\nclass RMSNorm(Builtin):\n    pass\n"
    )
    report = judge_problem(PROBLEM, src, store)
    init = next(c for c in report.cases if c.name == "rmsnorm_init")
    assert init.verdict == Verdict.WA and "torch.nn.RMSNorm" in init.message


def test_starter_scores_zero_with_readable_errors(store: ExpectedStore) -> None:
    report = judge_problem(PROBLEM, PROBLEM.starter.source(), store)
    assert report.verdict == Verdict.RE and report.score == 0
    assert "NotImplementedError" in report.cases[0].message


FUSED = "return F.rms_norm(x, (x.shape[-1],), 1 + self.weight, self.eps)"


@pytest.mark.parametrize(
    ("door", "prelude"),
    [
        # The attack that scored 100: functools.wraps left the original one attribute away.
        ("wrapped", "fused = F.rms_norm.__wrapped__\n"),
        ("unwrap", "import inspect\nfused = inspect.unwrap(F.rms_norm)\n"),
        ("aten", "fused = lambda x, shape, w, eps: torch.ops.aten.rms_norm(x, list(shape), w, eps)\n"),
    ],
)
def test_guards_leave_no_path_to_the_fused_op(door: str, prelude: str, store: ExpectedStore) -> None:
    src = PROBLEM.reference.source().replace(
        "return (_normalize_fp32(x, self.eps) * scale).to(x.dtype)",
        FUSED.replace("F.rms_norm", "fused"),
    )
    assert "fused(" in src, door
    src = src.replace("\nclass ", "\n" + prelude + "\n\nclass ", 1)
    report = judge_problem(PROBLEM, src, store)
    assert report.verdict != Verdict.AC and report.score < 100, door
    rms = next(c for c in report.cases if c.name == "rmsnorm_fp32")
    assert rms.verdict != Verdict.AC, (door, rms.message)


# transformers' own classes, as a learner porting production code would write them (issue 29):
# its gated norm rounds twice in bf16 (the statement's "differs from transformers" note), and
# the cases accept that.
TRANSFORMERS_NORMS = """
from transformers.models.qwen3_5.modeling_qwen3_5 import Qwen3_5RMSNorm as RMSNorm
from transformers.models.qwen3_5.modeling_qwen3_5 import Qwen3_5RMSNormGated as GatedRMSNorm
from transformers.models.qwen3_5.modeling_qwen3_5 import l2norm as _l2norm


def l2norm(x, eps=1e-6):
    return _l2norm(x, eps=eps)
"""


def test_transformers_own_norms_pass_every_case() -> None:
    assert failing_cases(PROBLEM, TRANSFORMERS_NORMS) == {}
