"""Values in the wrong places: shifted by one, halves swapped or negated, reversed."""

from __future__ import annotations

import torch

from tests.judge.core.diagnose.factories import diagnoses, kinds, tensor


def test_off_by_one_along_the_sequence() -> None:
    e = tensor(2, 9, 4)
    late = torch.cat([e[:, :1], e[:, :-1]], dim=1)  # position i holds what belongs at i - 1
    (d,) = diagnoses({"y": e}, {"y": late})
    assert d.kind == "shifted" and "axis 1" in d.text.en and "i-1" in d.text.en


def test_rotate_half_the_wrong_way() -> None:
    e = tensor(3, 8)
    h = e.shape[-1] // 2
    assert kinds({"y": e}, {"y": torch.cat([e[:, h:], e[:, :h]], -1)}) == ["halves_swapped"]
    assert kinds({"y": e}, {"y": torch.cat([e[:, :h], -e[:, h:]], -1)})[0] == "half_negated"


def test_reversed_along_an_axis() -> None:
    e = tensor(5, 3)
    assert kinds({"y": e}, {"y": e.flip(0)}) == ["reversed"]


def test_a_few_wrong_elements_are_not_a_shift() -> None:
    e = torch.ones(2, 9)
    got = e.clone()
    got[0, -1] = 9.0
    assert "shifted" not in kinds({"y": e}, {"y": got})
