"""The right values in the wrong arrangement: permuted axes, another shape, a size-1 axis, a dtype."""

from __future__ import annotations

import torch

from tests.judge.core.diagnose.factories import diagnoses, kinds, tensor


def test_a_transpose_too_many_names_the_permutation() -> None:
    e = tensor(2, 4, 6, 8)
    (d,) = diagnoses({"y": e}, {"y": e.transpose(1, 2).contiguous()})
    assert d.kind == "axes_permuted" and "(0, 2, 1, 3)" in d.text.en and "transpose" in d.text.zh


def test_a_kept_axis_of_size_one() -> None:
    e = tensor(3, 5)
    assert kinds({"y": e}, {"y": e.unsqueeze(-1)})[0] == "extra_axis"
    assert kinds({"y": e.unsqueeze(1)}, {"y": e})[0] == "missing_axis"


def test_the_same_elements_in_another_shape() -> None:
    e = tensor(4, 6)
    assert kinds({"y": e}, {"y": e.reshape(6, 4)}) == ["reshaped"]


def test_right_values_in_the_wrong_dtype() -> None:
    e = tensor(4, 6)
    (d,) = diagnoses({"y": e}, {"y": e.double()})
    assert d.kind == "dtype" and "torch.float64" in d.text.en


def test_a_reduced_axis_is_a_broadcast_shape() -> None:
    e = tensor(4, 6)
    assert kinds({"y": e}, {"y": e.mean(dim=0)}) == ["broadcast"]


def test_unrelated_values_of_another_shape_say_nothing_wrong() -> None:
    e = tensor(4, 6)
    found = kinds({"y": e}, {"y": tensor(6, 4, seed=1)})
    assert "axes_permuted" not in found and "reshaped" not in found


def test_integer_tensors_too() -> None:
    e = torch.arange(12).reshape(3, 4)
    assert kinds({"ids": e}, {"ids": e.T.contiguous()}) == ["axes_permuted"]
