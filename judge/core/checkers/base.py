"""What every checker shares: strict shape and dtype, NaN/inf placement, and teaching messages.

A checker decides, element by element, whether a finite value is close enough. Everything
around that decision is here, so that all checkers speak the same way: which observation,
expected vs got shape and dtype, max abs and rel error, the first mismatching indices with
both values, and the fraction of elements that differ.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

from judge.core.messages import msg
from judge.core.texts import Text

FLOAT_DTYPES = (torch.float64, torch.float32, torch.float16, torch.bfloat16)
FIRST_MISMATCHES = 5
EXACTLY = msg("rule_exact")


class Mismatch:
    """Why one observation (named by `path`) does not match the reference, in both languages.

    The text may be given as a function that builds it: a failing tensor's message (errors,
    indices, first mismatches) is only worth building when someone reads it, and the
    diagnosers and the hint matcher ask thousands of times a package only whether two
    tensors agree."""

    __slots__ = ("_build", "_text", "path")

    def __init__(self, path: str, text: Text | Callable[[], Text]) -> None:
        self.path = path
        self._text: Text | None = text if isinstance(text, Text) else None
        self._build: Callable[[], Text] | None = None if isinstance(text, Text) else text

    @property
    def text(self) -> Text:
        if self._text is None:
            assert self._build is not None
            self._text, self._build = self._build(), None
        return self._text

    def in_language(self, lang: str) -> str:
        body = self.text.get(lang)
        return f"{self.path}: {body}" if self.path else body

    def __str__(self) -> str:
        """In English, for authors' tools (validate) and logs; a learner reads `text` in theirs."""
        return self.in_language("en")

    def __repr__(self) -> str:
        return f"Mismatch({self.path!r}, {self.text!r})"


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
        return Mismatch(path, msg("wrong_shape", expected=tuple(expected.shape), got=tuple(got.shape)))
    if got.dtype != expected.dtype:
        return Mismatch(path, msg("wrong_dtype", expected=expected.dtype, got=got.dtype))
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


def out_where(mask: torch.Tensor) -> torch.Tensor:
    """An excess of 0 where `mask` is false and inf (out by any measure) where it is true."""
    return torch.zeros(mask.shape, dtype=torch.float64).masked_fill(mask, math.inf)


def over(error: torch.Tensor, allowed: torch.Tensor | float) -> torch.Tensor:
    """error / allowed (float64), where an allowance of 0 admits no error at all: 0 for none, inf
    for any (0 / 0 would say NaN, and a NaN compares as within)."""
    allowed = torch.as_tensor(allowed, dtype=torch.float64)
    return torch.where(allowed > 0, error / allowed, out_where(error > 0))


# Given expected and got (same shape and float dtype), the excess among the finite elements
# (float64; what it says where either is NaN or inf is not read).
FiniteExcess = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]


def excess_with(expected: torch.Tensor, got: torch.Tensor, finite: FiniteExcess) -> torch.Tensor:
    """Every elementwise checker's excess, in check_with's order: exact for non-floats, NaN/inf by
    placement (0 where both agree, inf where they do not), `finite` for the rest."""
    if expected.dtype not in FLOAT_DTYPES:
        return out_where(expected != got)
    special = torch.isnan(expected) | torch.isnan(got) | torch.isinf(expected) | torch.isinf(got)
    return torch.where(special, out_where(special_mismatch(expected, got)), finite(expected, got))


def exact_excess(expected: torch.Tensor, got: torch.Tensor) -> torch.Tensor:
    """Equality with no allowance (NaN matches NaN, -0.0 matches 0.0): the exact checker's excess,
    and the relation a tool falls back on for a checker that is not element by element."""
    return excess_with(expected, got, lambda e, g: out_where(e != g))


def describe_failure(
    path: str,
    expected: torch.Tensor,
    got: torch.Tensor,
    bad: torch.Tensor,
    rule: Text,
    extra: Text | None = None,
) -> Mismatch:
    """The mismatch of a tensor whose elements marked in `bad` fail `rule` (its text is built
    when first read)."""
    return Mismatch(path, lambda: _failure_text(expected, got, bad, rule, extra))


def _failure_text(
    expected: torch.Tensor, got: torch.Tensor, bad: torch.Tensor, rule: Text, extra: Text | None
) -> Text:
    total = expected.numel()
    n_bad = int(bad.sum())
    share = f"{100.0 * n_bad / max(total, 1):.2f}%"
    parts = [_in_both("elements_differ", rule, bad=n_bad, total=total, share=share)]
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
        at, worst_abs = fmt_index(worst, expected.shape), fmt_value(float(abs_err[worst]))
        if bool(nonzero.any()):
            parts.append(msg("worst_error", abs=worst_abs, at=at, rel=fmt_value(float(rel_err.max()))))
        else:
            parts.append(msg("worst_error_at_zero", abs=worst_abs, at=at))
    if extra is not None:
        parts.append(extra)
    flat_bad = bad.reshape(-1).nonzero().reshape(-1)[:FIRST_MISMATCHES].tolist()
    items = [
        msg(
            "first_mismatch_item",
            at=fmt_index(i, expected.shape),
            expected=fmt_value(float(e64[i])),
            got=fmt_value(float(g64[i])),
        )
        for i in flat_bad
    ]
    if items:
        joined = Text("；".join(t.zh for t in items), "; ".join(t.en for t in items))
        parts.append(_in_both("first_mismatches", joined, param="items"))
    return Text.join(parts)


def _in_both(key: str, inner: Text, param: str = "rule", **params: object) -> Text:
    """A message that embeds another text: each language gets the inner text in its own."""
    return Text(msg(key, **params, **{param: inner.zh}).zh, msg(key, **params, **{param: inner.en}).en)


def special_failure(path: str, expected: torch.Tensor, got: torch.Tensor, bad: torch.Tensor) -> Mismatch:
    got_nan = int((torch.isnan(got) & ~torch.isnan(expected)).sum())
    got_inf = int((torch.isinf(got) & ~torch.isinf(expected)).sum())
    what = [msg("special_nan", n=got_nan)] if got_nan else []
    what += [msg("special_inf", n=got_inf)] if got_inf else []
    what = what or [msg("special_other")]
    joined = Text("，".join(t.zh for t in what), ", ".join(t.en for t in what))
    return describe_failure(path, expected, got, bad, _in_both("rule_special", joined, param="what"))


# Given expected and got (same shape and dtype, NaN/inf already in agreement), the mismatch
# among the finite elements, or None.
FiniteRule = Callable[[str, torch.Tensor, torch.Tensor], "Mismatch | None"]


# Given expected and got (same shape and float dtype), True only when `rule` and the NaN/inf
# placement would both find nothing: one fused test instead of both, for the usual answer.
QuickPass = Callable[[torch.Tensor, torch.Tensor], bool]


def check_with(
    path: str, expected: torch.Tensor, got: torch.Tensor, rule: FiniteRule, quick: QuickPass | None = None
) -> Mismatch | None:
    """Every checker's order: shape and dtype, exact for non-floats, NaN/inf placement, then `rule`."""
    if (m := structural_mismatch(path, expected, got)) is not None:
        return m
    # Equal element for element (no NaN: NaN equals nothing; -0.0 equals 0.0, as every rule
    # has it): nothing to find, and the usual answer for a right solution, in one pass.
    if torch.equal(expected, got):
        return None
    if expected.dtype not in FLOAT_DTYPES:
        bad = expected != got
        if bool(bad.any()):
            return describe_failure(path, expected, got, bad, EXACTLY)
        return None
    if quick is not None and quick(expected, got):
        return None
    special = special_mismatch(expected, got)
    if bool(special.any()):
        return special_failure(path, expected, got, special)
    return rule(path, expected, got)
