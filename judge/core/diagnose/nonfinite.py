"""NaN or inf where the reference is finite: where first, and the likely cause.

- inf in a low-precision result: an overflow (fp16 tops out at 65504; x² of 300 is past it);
- NaN across whole rows: a softmax over a row that is all -inf (a fully masked row);
- inf where the reference is large: exp of a large number (a softmax without the max
  subtracted first);
- NaN elsewhere: 0 · inf or inf - inf, usually a masked -inf that was multiplied or added.
"""

from __future__ import annotations

import torch

from judge.core.checkers.base import fmt_index
from judge.core.diagnose.probe import FLOATS, Diagnosis, Probe
from judge.core.texts import Text


def diagnose(p: Probe) -> list[Diagnosis]:
    e, g = p.expected, p.got
    if e.shape != g.shape or e.dtype not in FLOATS or g.dtype not in FLOATS or not p.usable():
        return []
    g = g.to(e.dtype) if g.dtype != e.dtype else g
    finite = torch.isfinite(e)
    nan = torch.isnan(g) & finite
    inf = torch.isinf(g) & finite
    if not bool((nan | inf).any()):
        return []
    first = int((nan | inf).reshape(-1).nonzero()[0])
    where = fmt_index(first, e.shape)
    count = int((nan | inf).sum())
    low = p.got.dtype in (torch.float16, torch.bfloat16)
    if bool(inf.any()) and low:
        zh, en, kind = (
            f"低精度（{p.got.dtype}）里溢出了：中间结果超出了它的范围；在 fp32 里算统计量/平方和，最后再转回去",
            f"an overflow in low precision ({p.got.dtype}): an intermediate went past its range; compute "
            "the statistics or squares in fp32 and convert back at the end",
            "overflow",
        )
    elif e.dim() >= 1 and bool(nan.any()) and bool((nan.all(dim=-1) == nan.any(dim=-1)).all()):
        zh, en, kind = (
            "整行都是 NaN：对一整行 -inf 做 softmax 会得到 NaN（一行的键全被屏蔽了？这样的行应当按题目的规定处理）",
            "whole rows are NaN: a softmax over a row of -inf gives NaN (a row with every key masked? "
            "handle such rows as the statement says)",
            "nan_rows",
        )
    elif bool(inf.any()) and float(e.abs().max()) > 20:
        zh, en, kind = (
            "对大数取了 exp：先减去每行的最大值再 exp（数值稳定的 softmax / logsumexp）",
            "exp of a large number: subtract each row's maximum before exp (the stable softmax or logsumexp)",
            "exp_overflow",
        )
    else:
        zh, en, kind = (
            "NaN 通常来自 0·inf 或 inf-inf：被屏蔽的 -inf 又被乘或加了？",
            "NaN usually comes from 0 · inf or inf - inf: was a masked -inf multiplied or added?",
            "nan",
        )
    return [
        Diagnosis(
            kind,
            0.8,
            Text(
                f"{p.name} 有 {count} 个 NaN/inf，而参考值是有限数（第一个在 {where}）。{zh}",
                f"{p.name} has {count} NaN/inf where the reference is finite (the first at {where}). {en}",
            ),
        )
    ]
