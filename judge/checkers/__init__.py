"""Checkers compare one observed tensor with the reference's; one module per checker."""

from typing import Protocol

import torch

from judge.checkers.allclose import AllClose, allclose
from judge.checkers.base import Mismatch
from judge.checkers.exact import Exact, exact
from judge.checkers.ulp import Ulp, ulp


class Checker(Protocol):
    @property
    def name(self) -> str: ...

    def describe(self) -> str: ...

    def check(self, path: str, expected: torch.Tensor, got: torch.Tensor) -> Mismatch | None: ...


__all__ = ["AllClose", "Checker", "Exact", "Mismatch", "Ulp", "allclose", "exact", "ulp"]
