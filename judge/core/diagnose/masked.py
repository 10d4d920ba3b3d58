"""Right except in a region: where the reference is 0 or -inf (masked and padded positions), or
in a few rows, heads or batch items (which ones).
"""

from __future__ import annotations

import torch

from judge.core.diagnose.probe import FLOATS, Diagnosis, Probe
from judge.core.texts import Text

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
    if best is None:
        return out + _right_only_at_an_end(p, bad)
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


def _right_only_at_an_end(p: Probe, bad: torch.Tensor) -> list[Diagnosis]:
    """Wrong everywhere along an axis except its first or its last index: what sets that index
    apart is its place. Along positions, the last one is the only one a causal mask leaves alone
    (a mask missing or shifted), the first the only one with nothing before it."""
    e = p.expected
    for axis in range(e.dim() - 1):
        size = e.shape[axis]
        if size < 3:
            continue
        other = [d for d in range(e.dim()) if d != axis]
        wrong = bad.any(dim=other) if other else bad
        right = (~wrong).nonzero().reshape(-1).tolist()
        if right == [size - 1]:
            return [
                Diagnosis(
                    "right_only_at_last",
                    0.8,
                    Text(
                        f"{p.name} 沿第 {axis} 维只有最后一个下标（{size - 1}）是对的，前面 {size - 1} 个都不对。"
                        "如果这一维是位置：只有最后一个位置看得到所有位置，它不受因果掩码影响；"
                        "掩码是不是没加上、错了一位，或被屏蔽的分数没有填 -inf？",
                        f"{p.name} is right only at the last index ({size - 1}) of axis {axis}; the {size - 1} "
                        "before it are wrong. If this axis is the position: the last position is the one a "
                        "causal mask does not touch, since it may see everything. Is the mask missing, off by "
                        "one, or are masked scores not filled with -inf?",
                    ),
                )
            ]
        if right == [0]:
            return [
                Diagnosis(
                    "right_only_at_first",
                    # Below SECOND_AT_LEAST: a shift or a running sum also leaves index 0 right,
                    # and when one of those is found it says more.
                    0.55,
                    Text(
                        f"{p.name} 沿第 {axis} 维只有下标 0 是对的，其余 {size - 1} 个都不对。"
                        "下标 0 的特别之处是它前面什么都没有（位置 0 的旋转角为 0、累加只有一项）："
                        "是不是位置、偏移或跨位置的累加算错了？",
                        f"{p.name} is right only at index 0 of axis {axis}; the other {size - 1} are wrong. "
                        "What sets index 0 apart is that nothing comes before it (position 0 turns by angle 0, "
                        "a running sum has one term): are positions, offsets or a sum across positions wrong?",
                    ),
                )
            ]
    return []
