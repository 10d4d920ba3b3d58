"""When a listed mistake's hint is shown (judge.core.grading.attach_hints), on synthetic observations:
only where the run's observations single that mistake out. The mistakes that used to be told
another's hint matched it on a value every mistake of a class gives (the right result of another
call, the right values in another dtype, one changed token id); and a learner wrong in another
way where the mistake acts does not make it."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import torch

from judge.core.casekit import Case
from judge.core.grading import attach_hints, grade_solution
from judge.core.results import CaseRun, Expected, SolutionRun, WrongSolution
from judge.core.texts import Text
from tests.judge.core.diagnose.factories import make_case, tensor

HINT = Text("你做错了", "You made the mistake.")


def cases(*names: str) -> list[Case]:
    return [replace(make_case(), name=n) for n in names]


CRASH = "crash"  # a case that raised: nothing observed


def run_of(observations: dict[str, Any]) -> SolutionRun:
    return SolutionRun(
        "ok",
        cases={
            n: CaseRun("error", message="boom") if o is CRASH else CaseRun("ok", observations=o)
            for n, o in observations.items()
        },
    )


def hinted(
    group: list[Case], reference: dict[str, Any], wrong: dict[str, Any], learner: dict[str, Any]
) -> list[str]:
    """The cases of `group` on which the learner is shown the wrong solution's hint."""
    names = {c.name for c in group}

    def only(obs: dict[str, Any]) -> dict[str, Any]:
        return {n: o for n, o in obs.items() if n in names}

    expected = Expected(run_of(only(reference)), [WrongSolution("w", HINT, run_of(only(wrong)))])
    run = run_of(only(learner))
    results = grade_solution(group, run, None, expected, explain=False)
    attach_hints(group, results, run, expected)
    return [r.name for r in results if r.hint]


# A 208-like package: "padded" is the padded one-token call, whose reference result is zeros;
# the mistake returns v there, which is the unpadded call's result ("y") too.
V = tensor(1, 2, 1, 8)
ROWS = tensor(3, 2, 6, 8, seed=1)
REFERENCE = {"left_padding": {"y": ROWS}, "single_token": {"y": V, "padded": torch.zeros_like(V)}}
UNIFORM = {"left_padding": {"y": ROWS + 0.5}, "single_token": {"y": V, "padded": V.clone()}}


def test_the_mistake_itself_is_told_on_every_case_it_fails() -> None:
    group = cases("left_padding", "single_token")
    assert hinted(group, REFERENCE, UNIFORM, UNIFORM) == ["left_padding", "single_token"]


def test_a_one_token_fast_path_is_not_told_the_finite_fill_hint() -> None:
    # It returns v for the padded token as the finite fill does, and is right on left_padding.
    fast_path = {"left_padding": {"y": ROWS.clone()}, "single_token": {"y": V, "padded": V.clone()}}
    assert hinted(cases("left_padding", "single_token"), REFERENCE, UNIFORM, fast_path) == []


def test_the_right_result_of_another_call_names_only_a_mistake_of_that_kind() -> None:
    # v for the padded token is what every mistake returns that ignores the padding. Here
    # left_padding tells nothing (the learner's code raised there); the uniform mistake has
    # values of its own on it, so "ignores the padding" does not name it.
    learner = {"left_padding": CRASH, "single_token": {"y": V, "padded": V.clone()}}
    assert hinted(cases("left_padding", "single_token"), REFERENCE, UNIFORM, learner) == []
    # A mistake that is nothing but the padding ignored is named by it.
    ignores_padding = {"left_padding": {"y": ROWS}, "single_token": {"y": V, "padded": V.clone()}}
    assert hinted(cases("left_padding", "single_token"), REFERENCE, ignores_padding, learner) == [
        "single_token"
    ]


A, B = tensor(4, 8, seed=2), tensor(4, 8, seed=3)
TWO_PLACES = {"a": {"y": A}, "b": {"y": B}}
BOTH_WRONG = {"a": {"y": A + 0.5}, "b": {"y": B + 0.5}}  # the mistake in two functions


def test_wrong_in_another_way_where_the_mistake_shows_argues_against_it() -> None:
    learner = {"a": {"y": A * 3}, "b": {"y": B + 0.5}}
    assert hinted(cases("a", "b"), TWO_PLACES, BOTH_WRONG, learner) == []


def test_a_mistake_made_in_one_of_the_places_is_still_named() -> None:
    # As a learner who computes softmax in bf16 but log_softmax in fp32: right on "a".
    learner = {"a": {"y": A}, "b": {"y": B + 0.5}}
    assert hinted(cases("a", "b"), TWO_PLACES, BOTH_WRONG, learner) == ["b"]


def test_a_mistake_of_the_learners_own_elsewhere_does_not_hide_a_match() -> None:
    reference = {"a": {"y": ROWS, "z": V}, "b": {"y": ROWS * 2}}
    wrong = {"a": {"y": ROWS + 0.5, "z": V}, "b": {"y": ROWS * 2 + 0.5}}
    # Wrong on "a.z" too (another mistake), the mistake's own values wherever it shows.
    learner = {"a": {"y": ROWS + 0.5, "z": V * 2}, "b": {"y": ROWS * 2 + 0.5}}
    assert hinted(cases("a", "b"), reference, wrong, learner) == ["b"]


def test_the_right_values_in_another_dtype_name_only_a_missing_cast() -> None:
    # 212's empty sequence: a bf16 state handed back with the right values, as every missing
    # cast does; the bf16 recurrence also has values of its own (on "bf16"), where the learner's
    # code raised.
    state = tensor(2, 3, 4, 5).bfloat16().float()
    o = tensor(2, 3, 8, 5, seed=1)
    reference = {"bf16": {"o": o}, "empty": {"final_state": state}}
    recurrence_in_bf16 = {"bf16": {"o": o + 0.1}, "empty": {"final_state": state.bfloat16()}}
    learner = {"bf16": CRASH, "empty": {"final_state": state.bfloat16()}}
    assert hinted(cases("bf16", "empty"), reference, recurrence_in_bf16, learner) == []
    # A mistake that is only the missing cast is named by it (208's output_fp32).
    missing_cast = {"bf16": {"o": o}, "empty": {"final_state": state.bfloat16()}}
    assert hinted(cases("bf16", "empty"), reference, missing_cast, learner) == ["empty"]


def test_one_changed_token_id_names_nothing_three_do() -> None:
    ids = torch.tensor([20, 0, 13, 21, 9, 12, 15, 21])
    one = ids.clone()
    one[0] = 7
    assert (
        hinted(cases("draws"), {"draws": {"ids": ids}}, {"draws": {"ids": one}}, {"draws": {"ids": one}})
        == []
    )
    three = one.clone()
    three[3:5] = torch.tensor([1, 2])
    assert hinted(
        cases("draws"), {"draws": {"ids": ids}}, {"draws": {"ids": three}}, {"draws": {"ids": three}}
    ) == ["draws"]
