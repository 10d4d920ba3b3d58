"""A constant factor or a constant offset: got = c · expected, or got = expected + c.

A factor that is a number the problem makes likely is named: √d and 1/√d (attention's scale
applied the wrong way or twice), d, 2 and ½, and -1 (a sign).
"""

from __future__ import annotations

import math

import torch

from judge.core.diagnose.probe import FLOATS, Diagnosis, Probe
from judge.core.texts import Text


def _named(c: float, d: int) -> tuple[str, str] | None:
    candidates = [
        (math.sqrt(d), f"√{d}", f"√{d}"),
        (1 / math.sqrt(d), f"1/√{d}", f"1/√{d}"),
        (float(d), str(d), str(d)),
        (1 / d, f"1/{d}", f"1/{d}"),
        (2.0, "2", "2"),
        (0.5, "½", "½"),
        (-1.0, "-1（符号反了）", "-1 (the sign is flipped)"),
    ]
    for value, zh, en in candidates:
        if value != 1.0 and abs(c - value) <= 1e-3 * abs(value):
            return zh, en
    return None


def diagnose(p: Probe) -> list[Diagnosis]:
    e, g = p.expected, p.got
    if e.shape != g.shape or e.dtype not in FLOATS or not p.usable():
        return []
    e64, g64 = e.double(), g.to(e.dtype).double()
    finite = torch.isfinite(e64) & torch.isfinite(g64)
    if not bool(finite.any()):
        return []
    ef, gf = e64[finite], g64[finite]
    out: list[Diagnosis] = []
    norm = float((ef * ef).sum())
    if norm > 0:
        c = float((gf * ef).sum()) / norm
        if abs(c - 1) > 1e-3 and c != 0 and math.isfinite(c) and p.close(e, (g64 / c).to(e.dtype)):
            d = e.shape[-1] if e.dim() else 1
            named = _named(c, d)
            # The name only where it says more than the number ("= √64" after 8; not "= 2" after 2).
            if named and named[1] == f"{c:.6g}":
                named = None
            zh_name = f"（= {named[0]}）" if named else ""
            en_name = f" (= {named[1]})" if named else ""
            out.append(
                Diagnosis(
                    "scaled",
                    0.95 if named else 0.85,
                    Text(
                        f"{p.name} 处处是参考值的 {c:.6g} 倍{zh_name}：除了一个常数因子都对，检查缩放（比如 1/√d 用反了或用了两次）",
                        f"{p.name} is {c:.6g} times the reference everywhere{en_name}: right but for a constant "
                        "factor; check the scaling (1/√d the wrong way round, or applied twice?)",
                    ),
                )
            )
            return out
    offset = float((gf - ef).mean())
    if abs(offset) > 0 and math.isfinite(offset) and p.close(e, (g64 - offset).to(e.dtype)):
        out.append(
            Diagnosis(
                "offset",
                0.85,
                Text(
                    f"{p.name} 处处比参考值多了常数 {offset:.6g}：一个多余的（或少了的）常数项，比如 1 + weight 里的 1、eps 或 bias",
                    f"{p.name} is the reference plus {offset:.6g} everywhere: a constant term too many or too "
                    "few (the 1 of 1 + weight, an eps, a bias?)",
                ),
            )
        )
    return out
