"""Problem 212 through the real judge: bf16 maths, in-place state edits, a misplaced eps, a
missing fp32 cast and an empty sequence are caught where they should be."""

from __future__ import annotations

import pytest

from judge.authoring.package import Problem
from judge.core.verdicts import Verdict
from judge.expected import ExpectedStore
from tests.factories import judge_problem, mutant_source
from tests.paths import REPO_ROOT

pytestmark = pytest.mark.slow

PROBLEM = Problem(REPO_ROOT / "problems" / "212-gated-delta-rule")


def _wrong(stem: str):  # type: ignore[no-untyped-def]
    return next(s for s in PROBLEM.solutions("wrong") if s.path.stem == stem)


def test_bf16_recurrence_is_caught_only_by_the_dtype_cases(store: ExpectedStore) -> None:
    wrong = _wrong("math_in_bf16")
    report = judge_problem(PROBLEM, wrong.source(), store)
    failing = [c for c in report.cases if c.verdict != Verdict.AC]
    # The empty sequence's bf16 initial state comes back in bf16 too; the stream's bf16 decoding
    # step carries the bf16 error into the state passed on.
    assert [c.name for c in failing] == ["bf16", "any_input_dtype", "empty_sequence", "stream_of_calls"]
    assert all("final_state" in c.message and c.hint == wrong.hint() for c in failing)


@pytest.mark.parametrize("mutant_id", ["_l2norm/0:eps-outside", "_l2norm/0:eps-drop", "_l2norm/0:arith#2"])
def test_eps_outside_or_without_the_sum_is_caught_by_short_vectors(
    store: ExpectedStore, mutant_id: str
) -> None:
    report = judge_problem(PROBLEM, mutant_source(PROBLEM, mutant_id), store)
    failing = [c.name for c in report.cases if c.verdict != Verdict.AC]
    assert failing == ["tiny_and_zero_vectors"]


@pytest.mark.parametrize(
    "mutant_id",
    [
        "gated_delta_rule/5:drop-cast",
        "gated_delta_rule/5:drop-cast#2",
        "gated_delta_rule/5:drop-cast#3",
        "gated_delta_rule/6:drop-cast",
    ],
)
def test_an_input_left_in_its_own_dtype_is_caught(store: ExpectedStore, mutant_id: str) -> None:
    report = judge_problem(PROBLEM, mutant_source(PROBLEM, mutant_id), store)
    failing = [c for c in report.cases if c.verdict != Verdict.AC]
    # An initial state left in its dtype also comes back in bf16 from an empty sequence.
    also = ["empty_sequence"] if mutant_id == "gated_delta_rule/6:drop-cast" else []
    assert [c.name for c in failing] == ["any_input_dtype", *also]
    # fp64 inputs would carry the state into fp64; final_state must stay fp32.
    assert all("final_state" in c.message and "dtype" in c.message for c in failing)


def test_in_place_initial_state_is_caught_and_explained(store: ExpectedStore) -> None:
    wrong = _wrong("updates_initial_state_in_place")
    report = judge_problem(PROBLEM, wrong.source(), store)
    by_name = {c.name: c for c in report.cases}
    assert by_name["inputs_untouched"].verdict == Verdict.WA
    assert "initial_state_after_call" in by_name["inputs_untouched"].message
    assert by_name["inputs_untouched"].hint == wrong.hint()
    # Autograd refuses the in-place edit of a leaf that requires grad.
    assert by_name["backward"].verdict == Verdict.RE
    assert by_name["fp32_basic"].verdict == Verdict.AC


def test_starter_scores_zero(store: ExpectedStore) -> None:
    report = judge_problem(PROBLEM, PROBLEM.starter.source(), store)
    assert report.verdict == Verdict.RE and report.score == 0
    assert "NotImplementedError" in report.cases[0].message


def test_an_empty_sequence_returns_an_empty_output_and_the_state(store: ExpectedStore) -> None:
    # The reference before the fix: torch.stack of the empty list of outputs raises.
    fixed = "torch.stack(outputs, dim=2) if outputs else v.new_zeros(batch, heads, 0, d_v)"
    source = PROBLEM.reference.source()
    assert fixed in source
    report = judge_problem(PROBLEM, source.replace(fixed, "torch.stack(outputs, dim=2)"), store)
    failing = [c for c in report.cases if c.verdict != Verdict.AC]
    # The stream of calls has an empty chunk too.
    assert [(c.name, c.verdict) for c in failing] == [
        ("empty_sequence", Verdict.RE),
        ("stream_of_calls", Verdict.RE),
    ]
    assert all("stack expects a non-empty TensorList" in c.message for c in failing)

    # Handing initial_state back as it came: None without one, bf16 from a bf16 one.
    wrong = _wrong("empty_returns_initial_state")
    report = judge_problem(PROBLEM, wrong.source(), store)
    failing = [c for c in report.cases if c.verdict != Verdict.AC]
    assert [c.name for c in failing] == ["empty_sequence"]
    assert failing[0].hint == wrong.hint()


def test_an_early_return_for_an_empty_sequence_is_not_told_the_bf16_hint(store: ExpectedStore) -> None:
    """An early return that hands back a clone of a bf16 initial state (zeros without one) gives
    the state in bf16 with the right values, as the recurrence run in bf16 does on that case;
    the right values in another dtype name any missing cast, and the code is right on every
    case where the recurrence in bf16 shows."""
    start = "    # Everything in fp32: the state is a running sum over the whole sequence.\n"
    early = (
        "    if seq == 0:\n"
        "        zeros = q.new_zeros(batch, heads, d_k, d_v)\n"
        "        state = zeros if initial_state is None else initial_state.clone()\n"
        "        return v.new_zeros(batch, heads, 0, d_v), state\n"
    )
    source = PROBLEM.reference.source()
    assert start in source
    report = judge_problem(PROBLEM, source.replace(start, early + start, 1), store)
    failing = [c for c in report.cases if c.verdict != Verdict.AC]
    assert [c.name for c in failing] == ["empty_sequence"]
    bf16_hint = _wrong("math_in_bf16").hint()
    assert "recurrence" in bf16_hint
    assert not failing[0].hint, failing[0].hint.en
    assert [d.kind for d in failing[0].diagnoses][:1] == ["dtype"]


def test_the_bf16_hint_starts_with_the_symptom(store: ExpectedStore) -> None:
    wrong = _wrong("math_in_bf16")
    report = judge_problem(PROBLEM, wrong.source(), store)
    hinted = next(c for c in report.cases if c.name == "bf16")
    assert hinted.hint.en.startswith("With bf16 inputs your o is further from the fp32 result")
    assert hinted.hint.zh.startswith("输入是 bf16 时")
