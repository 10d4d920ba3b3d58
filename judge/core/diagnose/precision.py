"""Errors of precision, not of logic: a step or two in the last place, or errors that grow with
the magnitude of the values or with the position along an axis.
"""

from __future__ import annotations

import torch

from judge.core.checkers.ulp import ulp_distance
from judge.core.diagnose.probe import FLOATS, Diagnosis, Probe
from judge.core.texts import Text

MIN_POSITIONS = 8


def diagnose(p: Probe) -> list[Diagnosis]:
    e, g = p.expected, p.got
    if e.shape != g.shape or e.dtype not in FLOATS or g.dtype != e.dtype or not p.usable():
        return []
    finite = torch.isfinite(e) & torch.isfinite(g)
    bad = p.bad() & finite
    if not bool(bad.any()):
        return []
    out: list[Diagnosis] = []
    dist = ulp_distance(e, g).masked_fill(~finite, 0)
    worst = int(dist[bad].max())
    if e.dtype in (torch.float16, torch.bfloat16, torch.float32) and worst <= 3:
        share = float(bad.float().mean())
        out.append(
            Diagnosis(
                "ulps",
                0.8,
                Text(
                    f"{p.name} 与参考只差 {worst} 个 ulp（最后一位上的 {worst} 步，{100 * share:.1f}% 的元素）：逻辑是对的，"
                    f"是中间结果的精度不够：在 fp32 里算完再转成 {e.dtype}，不要让中间量停在低精度",
                    f"{p.name} is at most {worst} ulp from the reference ({worst} step{'s' if worst > 1 else ''} in the last place, on "
                    f"{100 * share:.1f}% of elements): the logic is right, an intermediate lacks precision: "
                    f"compute in fp32 and convert to {e.dtype} once, at the end",
                ),
            )
        )
        return out
    err = (g.double() - e.double()).abs().masked_fill(~finite, 0)
    mag = e.double().abs().masked_fill(~finite, 0)
    flat_e, flat_err = mag.reshape(-1), err.reshape(-1)
    if flat_e.numel() >= MIN_POSITIONS and float(flat_err.sum()) > 0:
        # Rank correlation of |error| with |expected|: a relative error of constant size.
        ranks_e = flat_e.argsort().argsort().double()
        ranks_err = flat_err.argsort().argsort().double()
        corr = float(torch.corrcoef(torch.stack([ranks_e, ranks_err]))[0, 1])
        if corr > 0.9:
            out.append(
                Diagnosis(
                    "error_grows_with_magnitude",
                    0.5,
                    Text(
                        f"{p.name} 的误差随数值大小增长（秩相关 {corr:.2f}）：相对误差大致不变，像是某处多了一次舍入或缩放",
                        f"{p.name}'s error grows with the size of the values (rank correlation {corr:.2f}): a "
                        "roughly constant relative error, as from an extra rounding or scale somewhere",
                    ),
                )
            )
    for axis in range(e.dim()):
        n = e.shape[axis]
        if n < MIN_POSITIONS:
            continue
        other = [d for d in range(e.dim()) if d != axis]
        per = err.mean(dim=other) if other else err
        steps = per[1:] - per[:-1]
        if (
            float(per[-1]) > 4 * float(per[: max(n // 4, 1)].mean()) + 1e-12
            and float((steps >= 0).double().mean()) > 0.7
        ):
            out.append(
                Diagnosis(
                    "error_grows_with_position",
                    0.55,
                    Text(
                        f"{p.name} 的误差沿第 {axis} 维越来越大：位置越靠后错得越多（位置或角度在低精度里计算？累加的误差？）",
                        f"{p.name}'s error grows along axis {axis}: later positions are further off (positions "
                        "or angles computed in low precision? an error that accumulates?)",
                    ),
                )
            )
            break
    return out
