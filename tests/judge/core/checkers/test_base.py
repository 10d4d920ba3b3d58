"""What every checker shares: an element's excess says what its check says."""

from __future__ import annotations

import math

import pytest
import torch

from judge.core.checkers import Checker, allclose, distribution, exact, facts, ulp
from judge.core.checkers.base import exact_excess, over

ELEMENTWISE: list[Checker] = [
    allclose(),
    allclose(rtol=1e-3, atol=0.0),
    exact(),
    ulp(max_ulps=1),
    ulp(max_ulps=0),
]


def _pairs() -> list[tuple[torch.Tensor, torch.Tensor]]:
    g = torch.Generator().manual_seed(0)
    out = []
    for dtype in (torch.float32, torch.bfloat16, torch.float64):
        for scale in (0.0, 1e-8, 1e-6, 1e-3, 1.0):
            e = torch.randn(5, 7, generator=g)
            e[0, :2] = 0.0
            got = (e + scale * torch.randn(5, 7, generator=g)).to(dtype)
            out.append((e.to(dtype), got))
    e = torch.tensor([math.nan, math.inf, -math.inf, 1.0, 0.0])
    out.append((e, torch.tensor([math.nan, math.inf, math.inf, 1.0, 0.0])))
    out.append((e, e.clone()))
    out.append((torch.tensor([1, 2, 3]), torch.tensor([1, 2, 4])))
    return out


@pytest.mark.parametrize("checker", ELEMENTWISE, ids=lambda c: c.describe())
def test_an_element_out_of_allowance_is_what_fails_the_check(checker: Checker) -> None:
    for e, got in _pairs():
        excess = checker.excess(e, got)
        assert excess is not None and excess.dtype == torch.float64 and excess.shape == e.shape
        assert not bool(excess.isnan().any())
        assert bool((excess > 1).any()) == (checker.check("y", e, got) is not None), (checker, e, got)


@pytest.mark.parametrize("checker", [distribution(), facts("finite")], ids=lambda c: c.describe())
def test_a_checker_not_element_by_element_has_no_excess(checker: Checker) -> None:
    assert not checker.elementwise
    assert checker.excess(torch.zeros(3), torch.ones(3)) is None


def test_no_allowance_admits_no_error() -> None:
    assert over(torch.tensor([0.0, 1e-300, 3.0], dtype=torch.float64), 0.0).tolist() == [
        0.0,
        math.inf,
        math.inf,
    ]
    assert over(torch.tensor([0.0, 3.0]), torch.tensor([0.0, 2.0])).tolist() == [0.0, 1.5]


def test_exact_excess_is_equality_with_nan_matching_nan() -> None:
    e = torch.tensor([math.nan, 0.0, 1.0, math.inf])
    assert exact_excess(e, torch.tensor([math.nan, -0.0, 1.5, -math.inf])).tolist() == [
        0.0,
        0.0,
        math.inf,
        math.inf,
    ]
