"""Exact equality: every element bit for bit the same (NaN matches NaN, -0.0 matches 0.0)."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from judge.checkers.base import (
    Mismatch,
    describe_failure,
    special_failure,
    special_mismatch,
    structural_mismatch,
)


@dataclass(frozen=True)
class Exact:
    name: str = "exact"

    def describe(self) -> str:
        return "exact"

    def check(self, path: str, expected: torch.Tensor, got: torch.Tensor) -> Mismatch | None:
        if (m := structural_mismatch(path, expected, got)) is not None:
            return m
        if expected.dtype.is_floating_point:
            special = special_mismatch(expected, got)
            if bool(special.any()):
                return special_failure(path, expected, got, special)
            bad = (expected != got) & ~torch.isnan(expected)
        else:
            bad = expected != got
        if bool(bad.any()):
            return describe_failure(path, expected, got, bad, "须完全相等 must be exactly equal")
        return None


def exact() -> Exact:
    return Exact()
