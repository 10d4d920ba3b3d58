"""A constant factor (named when it is √d, 1/√d, d, 2, ½ or -1) or a constant offset."""

from __future__ import annotations

import math

import pytest

from tests.judge.core.diagnose.factories import diagnoses, kinds, tensor


@pytest.mark.parametrize(
    ("factor", "name"), [(math.sqrt(64), "√64"), (1 / 8, "1/√64"), (2.0, "2"), (-1.0, "-1")]
)
def test_a_known_factor_is_named(factor: float, name: str) -> None:
    e = tensor(3, 64)
    (d,) = diagnoses({"y": e}, {"y": e * factor})
    assert d.kind == "scaled" and name in d.text.en


def test_an_unknown_factor_is_still_a_factor() -> None:
    e = tensor(3, 10)
    (d,) = diagnoses({"y": e}, {"y": e * 1.37})
    assert d.kind == "scaled" and "1.37" in d.text.en and d.strength < 0.9


def test_a_constant_offset() -> None:
    e = tensor(3, 10)
    assert kinds({"y": e}, {"y": e + 1.0}) == ["offset"]


def test_noise_is_neither() -> None:
    e = tensor(3, 10)
    found = kinds({"y": e}, {"y": e + 0.3 * tensor(3, 10, seed=2)})
    assert "scaled" not in found and "offset" not in found
