"""Over a case's whole observation tree: gradients, inputs changed in place, zeros, equal outputs;
and at most two diagnoses, strongest first."""

from __future__ import annotations

import torch

from judge.core.checkers import exact
from tests.judge.core.diagnose.factories import diagnoses, kinds, make_case, tensor


def test_forward_right_gradient_missing() -> None:
    e = tensor(3, 4)
    found = diagnoses({"y": e, "grads": {"x": e}}, {"y": e, "grads": {"x": None}})
    assert found[0].kind == "gradient_missing" and "`grads.x`" in found[0].text.en


def test_forward_right_gradient_wrong() -> None:
    e = tensor(3, 4)
    # The factor is the sharper sentence; that the forward is right comes second.
    assert kinds({"y": e, "grads": {"x": e}}, {"y": e, "grads": {"x": e * 2}}) == ["scaled", "gradient_wrong"]


def test_an_input_changed_in_place_comes_first() -> None:
    e = tensor(3, 4)
    case = make_case(checkers={"x_after_call": exact()})
    assert kinds({"y": e, "x_after_call": e}, {"y": e, "x_after_call": e * 2}, case)[0] == "input_modified"


def test_all_zeros() -> None:
    e = tensor(3, 4)
    assert kinds({"y": e}, {"y": torch.zeros(3, 4)})[0] == "zeros"


def test_an_output_equal_to_an_input() -> None:
    x, e = tensor(3, 4), tensor(3, 4, seed=1)
    assert "equals_other" in kinds({"y": e, "x_after_call": x}, {"y": x.clone(), "x_after_call": x})


def test_at_most_two_and_strongest_first() -> None:
    e = tensor(2, 4, 6, 8)
    found = diagnoses({"y": e, "z": e}, {"y": e * 8**0.5, "z": e.transpose(1, 2).contiguous()})
    assert len(found) <= 2
    assert [d.strength for d in found] == sorted((d.strength for d in found), reverse=True)


def test_a_passing_case_has_no_diagnosis() -> None:
    e = tensor(3, 4)
    assert diagnoses({"y": e}, {"y": e.clone()}) == []
