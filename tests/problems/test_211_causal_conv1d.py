"""Problem 211 through the real judge: forbidden convolutions are named, in-place state edits caught;
the former survivors (an unconverted state, a returned state that is a view, a bf16 input met by
type promotion) each fail the one case that checks their promise."""

from __future__ import annotations

import pytest

from judge.authoring.package import Problem
from judge.core.casekit import Rng
from judge.core.compare import compare
from judge.core.verdicts import Verdict
from judge.expected import ExpectedStore
from tests.factories import failing_cases, judge_problem, mutant_source, source_module
from tests.paths import REPO_ROOT

PROBLEM = Problem(REPO_ROOT / "problems" / "211-causal-conv1d")

ONE_SHOT_BODY = "    y = F.silu(z).to(x.dtype)\n"


def _failing_or_raising(source: str) -> dict[str, str]:
    """Like failing_cases, but a case that raises counts as failing, with the error's message."""
    ref = source_module("reference", PROBLEM.reference.source())
    impl = source_module("candidate", source)
    out = {}
    for c in PROBLEM.cases:
        try:
            got = c.fn(impl, Rng(c.seed))
        except Exception as e:  # any error fails the case, as in the runner
            out[c.name] = str(e)
            continue
        mismatches = compare(c, c.fn(ref, Rng(c.seed)), got)
        if mismatches:
            out[c.name] = "; ".join(str(m) for m in mismatches)
    return out


def test_case_counts() -> None:
    cases = PROBLEM.cases
    assert sum(c.public for c in cases) == 3
    assert sum(not c.public for c in cases) >= 6
    assert {"mixed_dtypes", "caller_writes_returned_state", "backward_bf16"} <= {c.name for c in cases}
    assert sum(c.points for c in cases) == 100


@pytest.mark.parametrize(
    ("mutant_id", "case_name"),
    [
        ("_padded_stream/1:drop-cast", "mixed_dtypes"),  # an fp32 initial_state makes the stream fp32
        ("causal_conv1d_step/0:drop-cast", "mixed_dtypes"),  # an fp32 state makes the step's new_state fp32
        (
            "causal_conv1d/3:drop-cast",
            "backward_bf16",
        ),  # bf16 x by promotion: y exact, x.grad rounded per tap
    ],
)
def test_former_survivors_fail_only_the_case_of_their_promise(mutant_id: str, case_name: str) -> None:
    assert list(failing_cases(PROBLEM, mutant_source(PROBLEM, mutant_id))) == [case_name]


@pytest.mark.parametrize("mutant_id", ["causal_conv1d/8:drop-clone", "causal_conv1d_step/3:drop-clone"])
def test_a_state_that_is_a_view_breaks_backward_once_the_caller_writes_into_it(mutant_id: str) -> None:
    failing = _failing_or_raising(mutant_source(PROBLEM, mutant_id))
    assert list(failing) == ["caller_writes_returned_state"]
    assert "modified by an inplace operation" in failing["caller_writes_returned_state"]


@pytest.mark.parametrize(
    "mutant_id",
    [
        "causal_conv1d/3:drop-cast#2",
        "causal_conv1d/6.0:drop-cast",
        "causal_conv1d_step/1:drop-cast",
        "causal_conv1d_step/1:drop-cast#2",
        "causal_conv1d_step/2.0:drop-cast",
    ],
)
def test_declared_equivalents_pass_every_case(mutant_id: str) -> None:
    # An fp32 operand promotes the bf16 one to fp32 exactly: outputs and gradients are the same bits.
    assert failing_cases(PROBLEM, mutant_source(PROBLEM, mutant_id)) == {}


def test_casting_in_every_step_of_a_token_loop_fails_only_the_bf16_backward() -> None:
    wrong = next(s for s in PROBLEM.solutions("wrong") if s.path.stem == "token_loop_bf16_grads")
    assert list(failing_cases(PROBLEM, wrong.source())) == ["backward_bf16"]


@pytest.mark.slow
def test_torch_conv1d_is_forbidden_as_the_same_object_as_f_conv1d(store: ExpectedStore) -> None:
    call = "torch.conv1d"
    src = PROBLEM.reference.source()
    assert ONE_SHOT_BODY in src
    src = src.replace(
        ONE_SHOT_BODY,
        f"    z = {call}(xpad.float(), weight.float()[:, None], bias, groups=x.shape[1])\n" + ONE_SHOT_BODY,
    )
    report = judge_problem(PROBLEM, src, store)
    case = next(c for c in report.cases if c.name == "conv_fp32")
    assert case.verdict == Verdict.WA and "torch.nn.functional.conv1d" in case.message


@pytest.mark.slow
def test_in_place_state_update_is_caught_only_where_the_state_is_observed(store: ExpectedStore) -> None:
    wrong = next(s for s in PROBLEM.solutions("wrong") if s.path.stem == "step_updates_state_in_place")
    report = judge_problem(PROBLEM, wrong.source(), store)
    failing = {c.name: c for c in report.cases if c.verdict != Verdict.AC}
    # Its outputs are right. inputs_untouched sees the rewritten state; caller_writes_returned_state
    # observes the final_state it passed to the step afterwards; and in mixed_dtypes the state it
    # returns is the caller's fp32 state itself, not a bf16 one.
    assert set(failing) == {"inputs_untouched", "caller_writes_returned_state", "mixed_dtypes"}
    assert "state_after_step" in failing["inputs_untouched"].message
    assert failing["inputs_untouched"].hint == wrong.hint()


@pytest.mark.slow
def test_starter_scores_zero(store: ExpectedStore) -> None:
    report = judge_problem(PROBLEM, PROBLEM.starter.source(), store)
    assert report.verdict == Verdict.RE and report.score == 0
    assert "NotImplementedError" in report.cases[0].message
