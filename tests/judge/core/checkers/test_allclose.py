import math

import pytest
import torch

from judge.core.checkers import allclose
from judge.core.checkers.allclose import DEFAULT_TOLERANCES


def test_per_dtype_defaults_follow_torch_testing() -> None:
    assert allclose().tolerances(torch.bfloat16) == (1.6e-2, 1e-5)
    assert allclose().tolerances(torch.float32) == (1.3e-6, 1e-5)
    assert allclose(rtol=0.5).tolerances(torch.float32) == (0.5, 1e-5)
    assert set(DEFAULT_TOLERANCES) == {torch.float64, torch.float32, torch.float16, torch.bfloat16}


def test_within_and_beyond_tolerance() -> None:
    e = torch.tensor([1.0, 2.0, 3.0])
    assert allclose().check("y", e, e * (1 + 1e-7)) is None
    m = allclose().check("y", e, torch.tensor([1.0, 2.1, 3.0]))
    assert m is not None
    text = m.text.en
    assert "1 / 3" in text and "33.33%" in text
    assert "max abs err 0.0999999" in text and "[1]" in text
    assert "expected 2 got 2.1" in text


def test_no_broadcasting() -> None:
    e = torch.ones(2, 3)
    assert allclose().check("y", e, torch.ones(3)) is not None
    assert allclose().check("y", e, torch.ones(1, 3)) is not None


def test_nan_only_where_reference_has_nan() -> None:
    e = torch.tensor([float("nan"), 1.0])
    assert allclose().check("y", e, torch.tensor([float("nan"), 1.0])) is None
    m = allclose().check("y", torch.tensor([0.0, 1.0]), torch.tensor([float("nan"), 1.0]))
    assert m is not None and "NaN" in m.text.en
    assert allclose().check("y", e, torch.tensor([0.0, 1.0])) is not None


def test_inf_must_match_in_place_and_sign() -> None:
    e = torch.tensor([float("inf"), 1.0])
    assert allclose().check("y", e, torch.tensor([float("inf"), 1.0])) is None
    assert allclose().check("y", e, torch.tensor([float("-inf"), 1.0])) is not None
    assert allclose().check("y", e, torch.tensor([1e38, 1.0])) is not None


def test_negative_tolerance_is_refused() -> None:
    with pytest.raises(ValueError):
        allclose(rtol=-1.0)


def test_relative_error_leaves_out_an_expected_zero() -> None:
    """An error next to an expected 0 once printed 'max rel err 4.49e+307'."""
    check = allclose(rtol=1e-5, atol=1e-8)
    mismatch = check.check("y", torch.tensor([0.0, 2.0]), torch.tensor([1e-3, 3.0]))
    assert mismatch is not None
    assert "max rel err 0.5" in mismatch.text.en and "e+307" not in mismatch.text.en
    mismatch = check.check("y", torch.zeros(3), torch.tensor([0.0, 1e-3, 0.0]))
    assert mismatch is not None and "the reference is 0" in mismatch.text.en


def test_excess_is_error_over_allowance() -> None:
    e = torch.tensor([1.0, 2.0, 0.0, 4.0])
    got = torch.tensor([1.0, 2.5, 0.1, 4.0])
    # allowance atol + rtol·|e|: 0.2, 0.1, 0.1
    assert allclose(rtol=0.05, atol=0.1).excess(e, got).tolist() == pytest.approx([0.0, 2.5, 1.0, 0.0])


def test_excess_with_no_allowance_is_zero_or_out() -> None:
    e = torch.tensor([0.0, 0.0, 1.0])
    assert allclose(rtol=1e-3, atol=0.0).excess(e, torch.tensor([0.0, 1e-9, 1.0])).tolist() == [
        0.0,
        math.inf,
        0.0,
    ]


def test_excess_places_nan_and_inf() -> None:
    e = torch.tensor([math.nan, math.inf, -math.inf, 1.0, math.nan])
    got = torch.tensor([math.nan, math.inf, 5.0, math.nan, 1.0])
    assert allclose().excess(e, got).tolist() == [0.0, 0.0, math.inf, math.inf, math.inf]
