"""Closeness within |got - expected| <= atol + rtol * |expected|, with per-dtype defaults."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import torch

from judge.core.checkers.base import Mismatch, check_with, describe_failure, excess_with, over
from judge.core.messages import msg

# The defaults of torch.testing.assert_close, so that "close" means what PyTorch users expect.
DEFAULT_TOLERANCES: dict[torch.dtype, tuple[float, float]] = {
    torch.float64: (1e-7, 1e-7),
    torch.float32: (1.3e-6, 1e-5),
    torch.float16: (1e-3, 1e-5),
    torch.bfloat16: (1.6e-2, 1e-5),
}


@dataclass(frozen=True)
class AllClose:
    elementwise: ClassVar[bool] = True
    rtol: float | None = None
    atol: float | None = None
    name: str = "allclose"

    def tolerances(self, dtype: torch.dtype) -> tuple[float, float]:
        rtol, atol = DEFAULT_TOLERANCES.get(dtype, (0.0, 0.0))
        return (rtol if self.rtol is None else self.rtol, atol if self.atol is None else self.atol)

    def describe(self) -> str:
        if self.rtol is None and self.atol is None:
            return "allclose (per-dtype defaults)"
        return f"allclose (rtol={self.rtol}, atol={self.atol})"

    def check(self, path: str, expected: torch.Tensor, got: torch.Tensor) -> Mismatch | None:
        return check_with(path, expected, got, self._close, self._all_close)

    def excess(self, expected: torch.Tensor, got: torch.Tensor) -> torch.Tensor:
        rtol, atol = self.tolerances(expected.dtype)

        def finite(e: torch.Tensor, g: torch.Tensor) -> torch.Tensor:
            e64 = e.to(torch.float64)
            return over((g.to(torch.float64) - e64).abs(), atol + rtol * e64.abs())

        return excess_with(expected, got, finite)

    def _all_close(self, expected: torch.Tensor, got: torch.Tensor) -> bool:
        # The same test as _close, in float64, with NaN matching NaN and an infinity matching
        # the same infinity (as the NaN/inf placement demands); anything else takes the long way.
        rtol, atol = self.tolerances(expected.dtype)
        e, g = expected.to(torch.float64), got.to(torch.float64)
        return bool(torch.isclose(g, e, rtol=rtol, atol=atol, equal_nan=True).all())

    def _close(self, path: str, expected: torch.Tensor, got: torch.Tensor) -> Mismatch | None:
        rtol, atol = self.tolerances(expected.dtype)
        e = expected.to(torch.float64)
        g = got.to(torch.float64)
        finite = torch.isfinite(e)
        diff = (g - e).abs().masked_fill(~finite, 0.0)
        bad = diff > atol + rtol * e.abs().masked_fill(~finite, 0.0)
        if bool(bad.any()):
            rule = msg("rule_tolerance", rtol=f"{rtol:g}", atol=f"{atol:g}")
            return describe_failure(path, expected, got, bad, rule)
        return None


def allclose(rtol: float | None = None, atol: float | None = None) -> AllClose:
    if (rtol is not None and rtol < 0) or (atol is not None and atol < 0):
        raise ValueError("allclose tolerances must be non-negative")
    return AllClose(rtol, atol)
