"""Checkers compare one observed tensor with the reference's; one module per checker."""

from typing import Protocol

import torch

from judge.checkers.allclose import AllClose, allclose
from judge.checkers.base import Mismatch
from judge.checkers.distribution import Distribution, distribution
from judge.checkers.exact import Exact, exact
from judge.checkers.facts import Facts, facts
from judge.checkers.ulp import Ulp, ulp


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
