"""Right except in a region: where the reference is 0 or -inf (masked and padded positions), or
in a few rows, heads or batch items (which ones).
"""

from __future__ import annotations

import torch

from judge.diagnose.probe import FLOATS, Diagnosis, Probe
from judge.texts import Text

MAX_LISTED = 6


def _listed(indices: list[int]) -> str:
    shown = ", ".join(str(i) for i in indices[:MAX_LISTED])
    return shown + (", …" if len(indices) > MAX_LISTED else "")


def diagnose(p: Probe) -> list[Diagnosis]:
    e, g = p.expected, p.got
    if e.shape != g.shape or not p.usable():
        return []
    bad = p.bad()
    n_bad = int(bad.sum())
    if n_bad == 0:
        return []
    out: list[Diagnosis] = []
    if e.dtype in FLOATS:
        zero = e == 0
        if bool(zero.any()) and bool((bad <= zero).all()) and not bool(zero.all()):
            out.append(
                Diagnosis(
                    "wrong_where_zero",
                    0.9,
                    Text(
                        f"{p.name} 只在参考值为 0 的位置不对（{n_bad} 个元素，其余都对）：这些通常是被屏蔽或填充的位置，"
                        "应当正好是 0（掩码没乘上、或填充的位置被算进去了？）",
                        f"{p.name} is wrong only where the reference is 0 ({n_bad} elements; the rest is right): "
                        "usually masked or padded positions, which must be exactly 0 (a mask not applied, "
                        "padding counted in?)",
                    ),
                )
            )
            return out
        neg_inf = torch.isinf(e) & (e < 0)
        if bool(neg_inf.any()) and bool((bad <= neg_inf).all()):
            out.append(
                Diagnosis(
                    "wrong_where_masked",
                    0.9,
                    Text(
                        f"{p.name} 只在参考值为 -inf 的位置不对（{n_bad} 个元素）：被屏蔽的分数要填 -inf，"
                        "不能是 0 或一个有限的大负数",
                        f"{p.name} is wrong only where the reference is -inf ({n_bad} elements): masked scores "
                        "must be -inf, not 0 or a large finite negative number",
                    ),
                )
            )
            return out
    # Rows, heads, batch items: along each axis but the last, which indices hold every error.
    best: tuple[float, int, list[int]] | None = None
    for axis in range(e.dim() - 1):
        size = e.shape[axis]
        if size < 2:
            continue
        other = [d for d in range(e.dim()) if d != axis]
        wrong = (
            bad.any(dim=other).nonzero().reshape(-1).tolist() if other else bad.nonzero().reshape(-1).tolist()
        )
        if 0 < len(wrong) <= size // 2 or (0 < len(wrong) < size and size <= 3):
            share = len(wrong) / size
            if best is None or share < best[0]:
                best = (share, axis, wrong)
    if best is not None:
        share, axis, wrong = best
        out.append(
            Diagnosis(
                "wrong_in_slices",
                0.75 - 0.3 * share,
                Text(
                    f"{p.name} 只有第 {axis} 维的下标 [{_listed(wrong)}] 不对，其余 {e.shape[axis] - len(wrong)} 个都对"
                    "（这些行、头或 batch 有什么特别：被填充、长度为 1、位置靠后？）",
                    f"{p.name} is wrong only at indices [{_listed(wrong)}] of axis {axis}; the other "
                    f"{e.shape[axis] - len(wrong)} are right (what is special about them: padded, of "
                    "length 1, at later positions?)",
                ),
            )
        )
    return out
