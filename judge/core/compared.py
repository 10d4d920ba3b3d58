"""What was compared on a failing public case, as a learner reads it beside the message: the
case's recorded inputs, and expected against got at the first positions that differ.

Only ever built for a public case, from the public job's observations (judge.core.grading):
a hidden case's values never reach this module's output.
"""

from __future__ import annotations

import math
from typing import Any

import torch

from judge.core.casekit import Case
from judge.core.checkers import Mismatch
from judge.core.compare import describe_type
from judge.core.diagnose import leaves

MAX_POSITIONS = 5  # rows of the expected / got table: enough to see a pattern, small enough to read
MAX_LEAVES = 3  # failing observations shown (the message names every one of them anyway)


def number(value: Any) -> Any:
    """A value as JSON carries it: finite floats to 6 significant digits, NaN and inf as text."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return str(value)
        return float(f"{value:.6g}")
    return str(value)


def compared(case: Case, expected: Any, got: Any, mismatches: list[Mismatch]) -> list[dict[str, Any]]:
    """For each of the first failing observations: its path, what each side is (shape and dtype
    of a tensor), and for an elementwise tensor the first differing positions (row-major), each
    with its index, the expected value and the learner's."""
    want, have = leaves(expected), leaves(got)
    out: list[dict[str, Any]] = []
    for m in mismatches[:MAX_LEAVES]:
        e, g = want.get(m.path), have.get(m.path)
        entry: dict[str, Any] = {"path": m.path, "expected": _what(e), "got": _what(g)}
        if isinstance(e, torch.Tensor) and isinstance(g, torch.Tensor):
            positions = _positions(case, m.path, e, g)
            if positions:
                entry["positions"] = positions
        out.append(entry)
    return out


def _what(value: Any) -> str:
    """A tensor as its shape and dtype; any other value as its short repr."""
    if isinstance(value, torch.Tensor) or value is None:
        return describe_type(value)
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _positions(case: Case, path: str, e: torch.Tensor, g: torch.Tensor) -> list[dict[str, Any]]:
    """The first differing elements, where the checker judges element by element and the shapes
    agree (otherwise a position means nothing: two random draws differ everywhere)."""
    checker = case.checker_for(path)
    if e.shape != g.shape or e.numel() == 0 or not checker.elementwise:
        return []
    try:
        excess = checker.excess(e, g.to(e.dtype))
    except (RuntimeError, TypeError):  # a dtype the checker cannot cast to: no positions
        return []
    if excess is None:
        return []
    bad = (excess > 1).reshape(-1).nonzero().flatten()[:MAX_POSITIONS].tolist()
    flat_e, flat_g = e.reshape(-1), g.reshape(-1)
    rows = []
    for flat in bad:
        index = list(torch.unravel_index(torch.tensor(flat), e.shape)) if e.dim() else []
        rows.append(
            {
                "index": [int(i) for i in index],
                "expected": number(flat_e[flat].item()),
                "got": number(flat_g[flat].item()),
            }
        )
    return rows
