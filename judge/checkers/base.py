"""What every checker shares: strict shape and dtype, NaN/inf placement, and teaching messages.

A checker decides, element by element, whether a finite value is close enough. Everything
around that decision is here, so that all checkers speak the same way: which observation,
expected vs got shape and dtype, max abs and rel error, the first mismatching indices with
both values, and the fraction of elements that differ.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

FLOAT_DTYPES = (torch.float64, torch.float32, torch.float16, torch.bfloat16)
FIRST_MISMATCHES = 5


@dataclass(frozen=True)
class Mismatch:
    """Why one observation (named by `path`) does not match the reference."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message


def fmt_value(v: float) -> str:
    return f"{v:.6g}"


def fmt_index(flat: int, shape: torch.Size) -> str:
    idx = []
    for size in reversed(shape):
        idx.append(flat % size if size else 0)
        flat = flat // size if size else 0
    return "[" + ", ".join(str(i) for i in reversed(idx)) + "]"


def structural_mismatch(path: str, expected: torch.Tensor, got: torch.Tensor) -> Mismatch | None:
    """Shape and dtype must match exactly: no broadcasting, no silent casts."""
    if got.shape != expected.shape:
        return Mismatch(
            path,
            f"形状不对 wrong shape: expected {tuple(expected.shape)}, got {tuple(got.shape)}",
        )
    if got.dtype != expected.dtype:
        return Mismatch(path, f"dtype 不对 wrong dtype: expected {expected.dtype}, got {got.dtype}")
    return None


def special_mismatch(expected: torch.Tensor, got: torch.Tensor) -> torch.Tensor:
    """Elements where NaN or inf appear in one tensor but not at the same place in the other."""
    e_nan, g_nan = torch.isnan(expected), torch.isnan(got)
    e_inf, g_inf = torch.isinf(expected), torch.isinf(got)
    bad = e_nan != g_nan
    bad |= e_inf != g_inf
    # Both infinite: the signs must agree.
    bad |= e_inf & g_inf & (torch.sign(expected) != torch.sign(got))
    return bad


def describe_failure(
    path: str,
    expected: torch.Tensor,
    got: torch.Tensor,
    bad: torch.Tensor,
    rule: str,
    extra: str = "",
) -> Mismatch:
    """Build the message for a tensor whose elements marked in `bad` fail `rule`."""
    total = expected.numel()
    n_bad = int(bad.sum())
    lines = [f"{n_bad} / {total} 个元素不符 elements differ ({100.0 * n_bad / max(total, 1):.2f}%), {rule}"]
    e64 = expected.detach().to(torch.float64).reshape(-1)
    g64 = got.detach().to(torch.float64).reshape(-1)
    finite = torch.isfinite(e64) & torch.isfinite(g64)
    if bool(finite.any()):
        abs_err = (g64 - e64).abs().masked_fill(~finite, 0.0)
        # Relative error only where the reference is not 0: dividing by the smallest float
        # printed "4.49e+307" for a tiny error next to an expected 0, which told nobody anything.
        nonzero = finite & (e64 != 0)
        rel_err = torch.where(nonzero, abs_err / e64.abs().masked_fill(~nonzero, 1.0), 0.0)
        worst = int(abs_err.argmax())
        rel = (
            f"max rel err {fmt_value(float(rel_err.max()))}" if bool(nonzero.any()) else "the reference is 0"
        )
        lines.append(
            f"max abs err {fmt_value(float(abs_err[worst]))} at {fmt_index(worst, expected.shape)}; {rel}"
        )
    if extra:
        lines.append(extra)
    flat_bad = bad.reshape(-1).nonzero().reshape(-1)[:FIRST_MISMATCHES].tolist()
    firsts = [
        f"{fmt_index(i, expected.shape)} expected {fmt_value(float(e64[i]))} got {fmt_value(float(g64[i]))}"
        for i in flat_bad
    ]
    if firsts:
        lines.append("first: " + "; ".join(firsts))
    return Mismatch(path, "\n".join(lines))


def special_failure(path: str, expected: torch.Tensor, got: torch.Tensor, bad: torch.Tensor) -> Mismatch:
    got_nan = int((torch.isnan(got) & ~torch.isnan(expected)).sum())
    got_inf = int((torch.isinf(got) & ~torch.isinf(expected)).sum())
    why = []
    if got_nan:
        why.append(f"{got_nan} 个 NaN NaN where the reference is a number")
    if got_inf:
        why.append(f"{got_inf} 个 inf inf where the reference is finite")
    if not why:
        why.append("NaN/inf 的位置或符号与参考不同 NaN/inf where the reference has none or another sign")
    return describe_failure(path, expected, got, bad, "NaN/inf: " + ", ".join(why))


# Given expected and got (same shape and dtype, NaN/inf already in agreement), the mismatch
# among the finite elements, or None.
FiniteRule = Callable[[str, torch.Tensor, torch.Tensor], "Mismatch | None"]


def check_with(path: str, expected: torch.Tensor, got: torch.Tensor, rule: FiniteRule) -> Mismatch | None:
    """Every checker's order: shape and dtype, exact for non-floats, NaN/inf placement, then `rule`."""
    if (m := structural_mismatch(path, expected, got)) is not None:
        return m
    if expected.dtype not in FLOAT_DTYPES:
        bad = expected != got
        if bool(bad.any()):
            return describe_failure(path, expected, got, bad, "须完全相等 must be exactly equal")
        return None
    special = special_mismatch(expected, got)
    if bool(special.any()):
        return special_failure(path, expected, got, special)
    return rule(path, expected, got)
