"""The right values in the wrong places: shifted by k, halves swapped or negated, reversed.

Off by one along an axis (positions from 1 instead of 0, a mask one step late), the two
halves of the last axis swapped or one of them negated (rotate_half written the wrong way),
or an axis read backwards.
"""

from __future__ import annotations

import torch

from judge.core.diagnose.probe import Diagnosis, Probe
from judge.core.texts import Text

SHIFTS = (1, -1, 2, -2)
MIN_KEPT = 2  # a shift must leave this many positions to compare
MIN_WRONG_FRACTION = 0.25


def diagnose(p: Probe) -> list[Diagnosis]:
    e, g = p.expected, p.got
    if e.shape != g.shape or e.dim() == 0 or not p.usable():
        return []
    g = g.to(e.dtype)
    # A misplacement is wrong almost everywhere; a few wrong elements are another story (and a
    # constant stretch would match any shift).
    if float(p.bad().float().mean()) < MIN_WRONG_FRACTION:
        return []
    out: list[Diagnosis] = []
    for axis in range(e.dim()):
        n = e.shape[axis]
        if n < 3:
            continue
        for k in SHIFTS:
            if n - abs(k) < MIN_KEPT:
                continue
            # got[i] == expected[i + k]: your value at i is the one expected k steps later.
            e_part = e.narrow(axis, max(k, 0), n - abs(k))
            g_part = g.narrow(axis, max(-k, 0), n - abs(k))
            if p.close(e_part, g_part) and not p.close(e, g):
                where = f"{'后' if k > 0 else '前'} {abs(k)} 个位置"
                out.append(
                    Diagnosis(
                        "shifted",
                        0.9,
                        Text(
                            f"{p.name} 沿第 {axis} 维错了 {abs(k)} 位：你在位置 i 的值是参考在位置 i{k:+d} 的值"
                            f"（你的结果比参考{where}；差一的错误：位置从 1 开始、掩码晚了一步？）",
                            f"{p.name} is shifted by {abs(k)} along axis {axis}: your value at i is the reference's "
                            f"at i{k:+d} (off by {abs(k)}: positions counted from 1, a mask one step late?)",
                        ),
                    )
                )
                return out
    n = e.shape[-1]
    if n >= 2 and n % 2 == 0:
        h = n // 2
        e1, e2 = e[..., :h], e[..., h:]
        for kind, candidate, zh, en in (
            (
                "halves_swapped",
                torch.cat([e2, e1], dim=-1),
                "最后一维的前后两半对调了",
                "the two halves of the last axis are swapped",
            ),
            (
                "half_negated",
                torch.cat([e1, -e2], dim=-1),
                "最后一维的后一半符号反了",
                "the second half of the last axis has the wrong sign",
            ),
            (
                "half_negated",
                torch.cat([-e1, e2], dim=-1),
                "最后一维的前一半符号反了",
                "the first half of the last axis has the wrong sign",
            ),
            (
                "halves_swapped",
                torch.cat([-e2, e1], dim=-1),
                "两半对调且一半取负（rotate_half 方向反了）",
                "the halves are swapped with one negated (rotate_half the wrong way)",
            ),
        ):
            if p.close(candidate, g):
                out.append(
                    Diagnosis(
                        kind,
                        0.9,
                        Text(
                            f"{p.name}：{zh}（检查 rotate_half 或按一半切分的地方）",
                            f"{p.name}: {en} (check rotate_half, or wherever the axis is split in two)",
                        ),
                    )
                )
                return out
    for axis in range(e.dim()):
        if e.shape[axis] >= 2 and p.close(e.flip(axis), g):
            out.append(
                Diagnosis(
                    "reversed",
                    0.85,
                    Text(
                        f"{p.name} 沿第 {axis} 维的顺序反了",
                        f"{p.name} is reversed along axis {axis}",
                    ),
                )
            )
            return out
    return out
