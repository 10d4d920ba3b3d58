"""The shortcuts of the checkers (equal tensors, allclose's fused test) never pass what the
full check fails, and the full check still explains what they do not pass."""

from __future__ import annotations

import itertools

import torch

from judge.core.checkers import allclose, exact, ulp
from judge.core.checkers.base import check_with

NAN, INF = float("nan"), float("inf")


def pairs() -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Expected and got around every edge: equal, within and just past the tolerance,
    NaN and infinities placed alike or not, -0.0 against 0.0."""
    base = torch.tensor([1.0, -2.0, 0.0, 3.5, 1e-7], dtype=torch.float64)
    out = []
    for dtype, (i, special), step in itertools.product(
        (torch.float32, torch.bfloat16, torch.float64),
        [(None, None), (0, NAN), (1, INF), (3, -INF)],
        (0.0, 1e-7, 9e-6, 1.1e-5, 1e-2),
    ):
        e = base.to(dtype)
        g = (base * (1 + step) + step).to(dtype)
        if i is not None:
            e, g = e.clone(), g.clone()
            e[i] = special
            for placed in (special, -special if special == special else 1.0, 2.0):
                h = g.clone()
                h[i] = placed
                out.append((e, h))
        out.append((e, g))
    out.append((torch.tensor([0.0, 1.0]), torch.tensor([-0.0, 1.0])))
    return out


def test_allclose_passes_quickly_exactly_what_it_passes_the_long_way() -> None:
    checker = allclose(rtol=1e-5, atol=1e-6)
    seen = set()
    for e, g in pairs():
        quick = checker._all_close(e, g)
        full = check_with("y", e, g, checker._close) is None
        assert quick == full, (e, g)
        assert (checker.check("y", e, g) is None) == full
        seen.add(full)
    assert seen == {True, False}


def test_equal_tensors_pass_every_checker_and_others_are_still_checked() -> None:
    for checker in (allclose(), exact(), ulp(max_ulps=1)):
        for e, g in pairs():
            if torch.equal(e, g):
                assert checker.check("y", e, g) is None
        wrong = checker.check("y", torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.5]))
        assert wrong is not None and "2.5" in wrong.in_language("en")
