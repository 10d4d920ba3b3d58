"""Exact equality: every element bit for bit the same (NaN matches NaN, -0.0 matches 0.0)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import torch

from judge.core.checkers.base import EXACTLY, Mismatch, check_with, describe_failure, exact_excess


def _equal(path: str, expected: torch.Tensor, got: torch.Tensor) -> Mismatch | None:
    bad = (expected != got) & ~torch.isnan(expected)
    if bool(bad.any()):
        return describe_failure(path, expected, got, bad, EXACTLY)
    return None


@dataclass(frozen=True)
class Exact:
    elementwise: ClassVar[bool] = True
    name: str = "exact"

    def describe(self) -> str:
        return "exact"

    def check(self, path: str, expected: torch.Tensor, got: torch.Tensor) -> Mismatch | None:
        return check_with(path, expected, got, _equal)

    def excess(self, expected: torch.Tensor, got: torch.Tensor) -> torch.Tensor:
        return exact_excess(expected, got)


def exact() -> Exact:
    return Exact()
