"""Distance in units in the last place, for low-precision outputs (bf16, fp16).

torch's default bf16 tolerance (rtol 1.6e-2) is wide enough to accept real mistakes, such
as statistics computed in bf16 instead of fp32: those are one to three ulps off in nearly
half of the elements. Counting ulps lets a case say exactly how far a correct formulation
may drift (for example, rounding an intermediate to bf16 moves about a quarter of the
elements by one ulp) and no further.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import torch

from judge.core.checkers.base import Mismatch, check_with, describe_failure, excess_with, over
from judge.core.messages import msg

# Integer views of the same width, used to put floats on an ordered integer line.
_INT_VIEW: dict[torch.dtype, torch.dtype] = {
    torch.float16: torch.int16,
    torch.bfloat16: torch.int16,
    torch.float32: torch.int32,
    torch.float64: torch.int64,
}


def ordered_bits(t: torch.Tensor) -> torch.Tensor:
    """Map floats to integers whose difference is the number of representable steps between them.

    -0.0 and +0.0 both map to 0; negative floats map below zero in order.
    """
    ints = t.contiguous().view(_INT_VIEW[t.dtype]).to(torch.int64)
    bits = torch.iinfo(_INT_VIEW[t.dtype]).bits
    magnitude = ints & ((1 << (bits - 1)) - 1)
    return torch.where(ints < 0, -magnitude, magnitude)


def ulp_distance(expected: torch.Tensor, got: torch.Tensor) -> torch.Tensor:
    """Element-wise ulp distance (int64); only meaningful where both are finite."""
    return (ordered_bits(expected) - ordered_bits(got)).abs()


@dataclass(frozen=True)
class Ulp:
    elementwise: ClassVar[bool] = True
    max_ulps: int = 1
    max_fraction: float = 1.0  # of all elements, how many may differ at all (by 1..max_ulps)
    name: str = "ulp"

    def describe(self) -> str:
        return f"ulp (<= {self.max_ulps} ulp, <= {100 * self.max_fraction:g}% differing)"

    def check(self, path: str, expected: torch.Tensor, got: torch.Tensor) -> Mismatch | None:
        return check_with(path, expected, got, self._within)

    def excess(self, expected: torch.Tensor, got: torch.Tensor) -> torch.Tensor:
        # No ulp allowed reads as half of one: a step is twice too far, and an error map still
        # grades the elements by how far they are.
        allowed = max(self.max_ulps, 0.5)
        return excess_with(expected, got, lambda e, g: over(ulp_distance(e, g).to(torch.float64), allowed))

    def _within(self, path: str, expected: torch.Tensor, got: torch.Tensor) -> Mismatch | None:
        finite = torch.isfinite(expected)
        dist = ulp_distance(expected, got).masked_fill(~finite, 0)
        total = max(expected.numel(), 1)
        differing = dist > 0
        frac = float(differing.sum()) / total
        too_far = dist > self.max_ulps
        worst = int(dist.max()) if dist.numel() else 0
        if bool(too_far.any()):
            return describe_failure(
                path,
                expected,
                got,
                too_far,
                msg("rule_ulps", max_ulps=self.max_ulps, worst=worst),
                extra=msg("ulps_share", share=f"{100 * frac:.1f}"),
            )
        if frac > self.max_fraction:
            return describe_failure(
                path,
                expected,
                got,
                differing,
                msg(
                    "rule_too_many_differ", share=f"{100 * frac:.1f}", allowed=f"{100 * self.max_fraction:g}"
                ),
            )
        return None


def ulp(max_ulps: int = 1, max_fraction: float = 1.0) -> Ulp:
    if max_ulps < 0 or not 0.0 <= max_fraction <= 1.0:
        raise ValueError("ulp needs max_ulps >= 0 and 0 <= max_fraction <= 1")
    return Ulp(max_ulps, max_fraction)
