"""The error of a failing tensor as a small picture: where it is wrong, at a glance.

The tensor is viewed as 2-D (leading axes flattened into rows, the last axis as columns),
each element's error is divided by what the case's checker allows there (the checker's
`excess`), and blocks are reduced by max to at most 64 x 64 cells. A cell above 1 holds an
element that fails (one out by any measure counts as 2); "nan" and "inf" mark cells with NaN or
inf where the reference is finite. A learner sees "the last column is wrong" or "every padded
row" before reading a number.

Only public cases get one: a hidden case's picture would show its inputs' structure.
"""

from __future__ import annotations

import math
from typing import Any

import torch

from judge.core.checkers import Checker

MAX_CELLS = 64
TEXT_ROWS, TEXT_COLS = 16, 48
# Darker means further out of tolerance: <= 1 is within it.
SHADES = " .:-=+*#%@"
# How an element out by any measure (an excess of inf: misplaced NaN or inf, any error where none
# is allowed) is drawn: out, as a cell must hold a number JSON can carry.
OUT = 2.0


def error_map(expected: torch.Tensor, got: torch.Tensor, checker: Checker) -> dict[str, Any] | None:
    """The picture of `got` against `expected`, or None when it means nothing (other shapes, no
    elements, a checker that does not judge element by element)."""
    if expected.shape != got.shape or expected.numel() == 0:
        return None
    e = expected.reshape(-1, expected.shape[-1]) if expected.dim() >= 2 else expected.reshape(1, -1)
    g = got.reshape(e.shape)
    rows, cols = e.shape
    ratio = checker.excess(e, g.to(e.dtype))
    if ratio is None:
        return None
    finite_e = torch.isfinite(e)
    nan = torch.isnan(g) & finite_e
    inf = torch.isinf(g) & finite_e
    ratio = ratio.masked_fill(torch.isinf(ratio), OUT)
    row_block, col_block = math.ceil(rows / MAX_CELLS), math.ceil(cols / MAX_CELLS)
    cells: list[list[Any]] = []
    for r0 in range(0, rows, row_block):
        line: list[Any] = []
        for c0 in range(0, cols, col_block):
            block = (slice(r0, r0 + row_block), slice(c0, c0 + col_block))
            if bool(nan[block].any()):
                line.append("nan")
            elif bool(inf[block].any()):
                line.append("inf")
            else:
                line.append(float(f"{float(ratio[block].max()):.3g}"))
        cells.append(line)
    shape = tuple(expected.shape)
    leading = "×".join(str(d) for d in shape[:-1]) or "1"
    return {
        "rows": rows,
        "cols": cols,
        "cells": cells,
        "row_block": row_block,
        "col_block": col_block,
        # Which axes, with their sizes: rows flatten every axis but the last.
        "row_axis": f"0..{len(shape) - 2} ({leading})" if len(shape) >= 2 else "-",
        "col_axis": f"{len(shape) - 1} ({shape[-1]})" if shape else "-",
        "shape": list(shape),
    }


def render_text(emap: dict[str, Any], lang: str = "zh") -> str:
    """A coarse picture for a terminal: one character per block of cells."""
    cells = emap["cells"]
    n_rows, n_cols = len(cells), len(cells[0]) if cells else 0
    step_r, step_c = max(1, math.ceil(n_rows / TEXT_ROWS)), max(1, math.ceil(n_cols / TEXT_COLS))
    lines = []
    for r in range(0, n_rows, step_r):
        chars = []
        for c in range(0, n_cols, step_c):
            block = [
                cells[i][j]
                for i in range(r, min(r + step_r, n_rows))
                for j in range(c, min(c + step_c, n_cols))
            ]
            if "nan" in block:
                chars.append("N")
            elif "inf" in block:
                chars.append("I")
            else:
                worst = max(float(v) for v in block)
                chars.append(
                    SHADES[0] if worst <= 1 else SHADES[min(len(SHADES) - 1, 1 + int(math.log10(worst) * 3))]
                )
        lines.append("|" + "".join(chars) + "|")
    rows, cols = emap["row_axis"], emap["col_axis"]
    if lang == "en":
        legend = f"error / tolerance; rows: {rows}, columns: {cols}; blank: within tolerance, N: NaN, I: inf"
    else:
        legend = f"误差 / 容差；行：{rows}，列：{cols}；空白 = 在容差内，N = NaN，I = inf"
    return "\n".join([legend, *lines])
