"""distribution(): random values compared as two samples of one distribution, never element by element."""

import math
from collections.abc import Callable

import pytest
import torch

from judge.core.checkers import Mismatch, distribution
from judge.core.checkers.distribution import ks_statistic


def _draw(seed: int, n: int = 64000, std: float = 0.02) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(n, generator=g) * std).reshape(-1, 64)


def test_another_draw_of_the_same_distribution_passes() -> None:
    ref = _draw(203)
    for seed in range(5):
        assert distribution().check("w", ref, _draw(1000 + seed)) is None


def test_a_hand_written_box_muller_draw_passes() -> None:
    u = torch.rand(2, 32000, generator=torch.Generator().manual_seed(7), dtype=torch.float64)
    r = torch.sqrt(-2 * torch.log1p(-u[0]))
    z = torch.cat([r * torch.cos(2 * math.pi * u[1]), r * torch.sin(2 * math.pi * u[1])])
    assert distribution().check("w", _draw(203), (z * 0.02).float().reshape(-1, 64)) is None


@pytest.mark.parametrize(
    ("name", "make", "says"),
    [
        ("std one", lambda g: torch.randn(64000, generator=g), "std should be about 0.02"),
        ("zeros", lambda g: torch.zeros(64000), "std should be about 0.02"),
        ("a mean of 0.001", lambda g: torch.randn(64000, generator=g) * 0.02 + 0.001, "mean should be about"),
        ("std 0.021", lambda g: torch.randn(64000, generator=g) * 0.021, "std should be about"),
        (
            "uniform, std 0.02",
            lambda g: (torch.rand(64000, generator=g) * 2 - 1) * 0.02 * math.sqrt(3),
            "the shape of the distribution differs",
        ),
    ],
)
def test_a_wrong_distribution_fails_with_the_statistic_that_shows_it(
    name: str, make: Callable[[torch.Generator], torch.Tensor], says: str
) -> None:
    got = make(torch.Generator().manual_seed(5)).reshape(-1, 64)
    m = distribution().check("weight", _draw(203), got)
    assert m is not None, name
    assert says in m.text.en and m.path == "weight"
    assert "not compared element by element" in m.text.en and "不逐元素比较" in m.text.zh


def test_the_allowances_follow_the_standard_errors() -> None:
    allowed = distribution().allowed(_draw(203).double().reshape(-1))
    # 6 standard errors of the difference of two samples of 64000 values with sigma 0.02.
    assert allowed["mean"] == pytest.approx(6 * 0.02 * math.sqrt(2 / 64000), rel=0.01)
    assert allowed["std"] == pytest.approx(6 * 0.02 * math.sqrt(1 / 64000), rel=0.02)
    assert allowed["ks"] == pytest.approx(0.018, abs=2e-4)


def test_shape_dtype_and_non_finite_counts_are_strict() -> None:
    ref = _draw(203)
    assert "shape" in _en(distribution().check("w", ref, ref.reshape(64, -1)))
    assert "dtype" in _en(distribution().check("w", ref, ref.double()))
    nan = _draw(9).clone()
    nan[0, 0] = float("nan")
    m = distribution().check("w", ref, nan)
    assert m is not None and "NaN / inf / -inf" in m.text.en
    # NaN where the reference has one, anywhere in the sample: counted, not placed.
    ref_nan = ref.clone()
    ref_nan[5, 5] = float("nan")
    assert distribution().check("w", ref_nan, nan) is None


def test_a_point_mass_must_be_matched_exactly() -> None:
    zeros = torch.zeros(1000, 64)
    assert distribution().check("w", zeros, zeros.clone()) is None
    m = distribution().check("w", zeros, _draw(1))
    assert m is not None and "every value of the reference is 0" in m.text.en


def test_identical_samples_and_a_permutation_pass() -> None:
    ref = _draw(203)
    assert distribution().check("w", ref, ref.clone()) is None
    perm = ref.reshape(-1)[torch.randperm(ref.numel(), generator=torch.Generator().manual_seed(0))]
    assert distribution().check("w", ref, perm.reshape(ref.shape)) is None


def test_the_ks_distance_counts_ties_exactly() -> None:
    a = torch.tensor([0.0, 0.0, 1.0, 1.0], dtype=torch.float64)
    b = torch.tensor([0.0, 1.0, 1.0, 1.0], dtype=torch.float64)
    assert ks_statistic(a, b) == (0.25, 0.0)
    assert ks_statistic(a, a)[0] == 0.0


def test_z_must_be_positive() -> None:
    with pytest.raises(ValueError):
        distribution(z=0)


def _en(m: Mismatch | None) -> str:
    assert m is not None
    return m.text.en
