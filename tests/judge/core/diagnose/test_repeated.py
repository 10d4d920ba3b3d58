"""Several calls of one object, observed as a list under one key or as numbered sibling keys:
right on the first call, wrong on a later one."""

from __future__ import annotations

from typing import Any

import torch

from judge.core.checkers import exact
from tests.judge.core.diagnose.factories import diagnoses, kinds, make_case, tensor


def calls(n: int) -> list[torch.Tensor]:
    return [tensor(2, 3, 4, seed=i) for i in range(n)]


def test_a_list_of_calls_right_first_then_wrong() -> None:
    want = calls(4)
    got = [want[0], want[1], want[2] + 1.0, want[3] + 1.0]
    (d, *_) = diagnoses({"steps": want}, {"steps": got})
    assert d.kind == "later_call_wrong"
    assert (
        "`steps` holds 4 calls of one object in order: the first of them, `steps[0]`, is right" in d.text.en
    )
    assert "`steps[2]` is the first that is wrong" in d.text.en
    assert "4 次调用" in d.text.zh and "从 `steps[2]` 起不对" in d.text.zh
    assert "a value kept from the first call?" in d.text.en


def test_a_later_call_returning_the_first_calls_result_is_named() -> None:
    want = calls(3)
    got = [want[0], want[0].clone(), want[0].clone()]
    (d, *_) = diagnoses({"steps": want}, {"steps": got})
    assert d.kind == "later_call_wrong"
    assert "`steps[1]`, `steps[2]` are exactly what `steps[0]` returned" in d.text.en
    assert "原样再用" in d.text.zh
    # That is why the calls are equal: not "an input returned as it came" as well.
    assert "equals_other" not in kinds({"steps": want}, {"steps": got})


def test_items_may_be_dicts_of_tensors() -> None:
    want = [{"o": t, "state": t * 2} for t in calls(3)]
    got = [dict(want[0]), dict(want[1]), {"o": want[2]["o"], "state": want[2]["state"] + 1}]
    assert kinds({"decode": want}, {"decode": got})[0] == "later_call_wrong"


def test_numbered_sibling_keys_are_calls_too() -> None:
    # As problem 210's cache_basics: update_1, update_2, update_3, each with a length and tensors.
    ks = calls(3)
    want: dict[str, Any] = {"initial_length": 0}
    want.update({f"update_{i}": {"length": i, "k_all": t} for i, t in enumerate(ks, 1)})
    got = {k: (dict(v) if isinstance(v, dict) else v) for k, v in want.items()}
    got["update_3"] = {"length": 3, "k_all": ks[1]}
    (d, *_) = diagnoses(want, got, make_case(checker=exact()))
    assert d.kind == "later_call_wrong"
    assert "`update_1` … `update_3` are 3 calls of one object in order" in d.text.en
    assert "`update_3` is the first that is wrong" in d.text.en


def test_not_when_the_first_call_is_wrong_too() -> None:
    want = calls(3)
    got = [t + 1.0 for t in want]
    assert "later_call_wrong" not in kinds({"steps": want}, {"steps": got})


def test_not_for_lists_without_tensors_nor_for_numbers_that_are_not_a_count() -> None:
    # Lengths and shapes are not outputs; head_dim_5 and head_dim_7 are two settings, not calls 5 and 7.
    e = calls(2)
    assert "later_call_wrong" not in kinds(
        {"lengths": [6, 7, 8], "y": e[0]}, {"lengths": [6, 8, 9], "y": e[0] + 1}
    )
    assert "later_call_wrong" not in kinds(
        {"head_dim_5": e[0], "head_dim_7": e[1]}, {"head_dim_5": e[0], "head_dim_7": e[1] + 1}
    )


def test_not_for_a_tuple_nor_numbered_keys_that_are_not_calls() -> None:
    # A tuple is one call's several results (y, state); layer_0, layer_1 are two layers.
    y, state = calls(2)
    assert "later_call_wrong" not in kinds({"out": (y, state)}, {"out": (y, state + 1)})
    assert "later_call_wrong" not in kinds(
        {"layer_0": y, "layer_1": state}, {"layer_0": y, "layer_1": state + 1}
    )


def test_calls_deeper_in_the_tree() -> None:
    want = calls(2)
    assert (
        kinds({"draws": {"steps": want}}, {"draws": {"steps": [want[0], want[1] * 3]}})[0]
        == "later_call_wrong"
    )
