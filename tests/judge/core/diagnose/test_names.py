"""Parameter names: a bias that should not be there, one that is missing, a name spelt
differently; as state_dict layouts ({name: shape}) and as lists of names."""

from __future__ import annotations

from judge.core.checkers import exact
from tests.judge.core.diagnose.factories import diagnoses, kinds, make_case

CASE = make_case(checker=exact())
LAYOUT = {"q_proj.weight": (8, 4), "k_proj.weight": (4, 4)}


def test_a_bias_nn_linear_adds_by_default() -> None:
    got = {**LAYOUT, "q_proj.bias": (8,)}
    (d,) = diagnoses({"layout": LAYOUT}, {"layout": got}, CASE)
    assert d.kind == "extra_bias" and "`q_proj.bias`" in d.text.en and "bias=False" in d.text.en


def test_the_same_mistake_in_a_list_of_names() -> None:
    want = sorted(LAYOUT)
    assert kinds({"names": want}, {"names": sorted([*want, "k_proj.bias"])}, CASE) == ["extra_bias"]


def test_a_missing_bias() -> None:
    want = {**LAYOUT, "q_proj.bias": (8,)}
    assert kinds({"layout": want}, {"layout": LAYOUT}, CASE) == ["missing_bias"]


def test_a_submodule_named_differently() -> None:
    want = {"self_attn.q_proj.weight": (8, 4)}
    (d,) = diagnoses({"layout": want}, {"layout": {"attn.q_proj.weight": (8, 4)}}, CASE)
    assert d.kind == "renamed" and "`attn.q_proj.weight` (≠ `self_attn.q_proj.weight`)" in d.text.en


def test_other_strings_say_nothing() -> None:
    assert kinds({"dtype": "bfloat16"}, {"dtype": "float32"}, CASE) == []
