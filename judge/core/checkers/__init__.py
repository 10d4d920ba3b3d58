"""Checkers compare one observed tensor with the reference's; one module per checker."""

from typing import Protocol

import torch

from judge.core.checkers.allclose import AllClose, allclose
from judge.core.checkers.base import Mismatch
from judge.core.checkers.distribution import Distribution, distribution
from judge.core.checkers.exact import Exact, exact
from judge.core.checkers.facts import Facts, facts
from judge.core.checkers.ulp import Ulp, ulp


class Checker(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def elementwise(self) -> bool:
        """Whether it judges element by element, so that an element's error means something (an
        error map, the scratch cell's checker for a dtype); a statistical checker does not."""
        ...

    def describe(self) -> str: ...

    def check(self, path: str, expected: torch.Tensor, got: torch.Tensor) -> Mismatch | None: ...

    def excess(self, expected: torch.Tensor, got: torch.Tensor) -> torch.Tensor | None:
        """Element by element, the error over what this checker allows there (float64, the
        shape of `expected`; `got` has its shape and dtype): <= 1 within, > 1 out, 0 where NaN or
        inf sit where the reference has them, inf where they do not or where no error is allowed.
        Whole-tensor conditions (ulp's share of differing elements) are not in it. None when the
        checker does not judge element by element (`elementwise` false). The error map draws it;
        the diagnosers read "> 1" as "this element is wrong"."""
        ...


__all__ = [
    "AllClose",
    "Checker",
    "Distribution",
    "Exact",
    "Facts",
    "Mismatch",
    "Ulp",
    "allclose",
    "distribution",
    "exact",
    "facts",
    "ulp",
]
