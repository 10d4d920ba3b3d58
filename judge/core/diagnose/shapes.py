"""Shapes and dtypes: the right values in the wrong arrangement.

- a permutation of the expected axes (a transpose too many or too few);
- the same elements in another shape (axes merged or split differently);
- an extra or a missing axis of size 1 (keepdim, squeeze, unsqueeze);
- a shape that broadcasts to the expected one, or that the expected one broadcasts to;
- the right values in another dtype (a cast too many or too few).
"""

from __future__ import annotations

import itertools

import torch

from judge.core.diagnose.probe import Diagnosis, Probe
from judge.core.texts import Text

MAX_PERMUTED_DIMS = 5


def _shape(t: torch.Tensor) -> str:
    return str(tuple(t.shape))


def diagnose(p: Probe) -> list[Diagnosis]:
    e, g = p.expected, p.got
    if g.shape == e.shape:
        if g.dtype != e.dtype and p.close(e, g.to(e.dtype)):
            return [
                Diagnosis(
                    "dtype",
                    0.9,
                    Text(
                        f"{p.name} 的数值是对的，但 dtype 是 {g.dtype}，应为 {e.dtype}：少了或多了一次类型转换"
                        f"（例如最后的 .to(x.dtype)）",
                        f"{p.name} has the right values but dtype {g.dtype} instead of {e.dtype}: a cast "
                        "is missing or one too many (say the final .to(x.dtype))",
                    ),
                )
            ]
        return []
    out: list[Diagnosis] = []
    if sorted(g.shape) == sorted(e.shape) and 1 < g.dim() <= MAX_PERMUTED_DIMS:
        for perm in itertools.permutations(range(g.dim())):
            if perm == tuple(range(g.dim())) or tuple(g.shape[i] for i in perm) != tuple(e.shape):
                continue
            if p.close(e, g.permute(perm)):
                moved = [i for i, j in enumerate(perm) if i != j]
                out.append(
                    Diagnosis(
                        "axes_permuted",
                        0.95,
                        Text(
                            f"{p.name} 的形状 {_shape(g)} 是应有形状 {_shape(e)} 的轴换了顺序：把你的结果做 "
                            f"permute{perm} 就与参考一致（轴 {moved} 放错了位置，多了或少了一次 transpose？）",
                            f"{p.name} has shape {_shape(g)}, the expected {_shape(e)} with its axes in another "
                            f"order: your result permuted by {perm} matches the reference (axes {moved} are "
                            "misplaced: a transpose too many or too few?)",
                        ),
                    )
                )
                return out
    squeezed = [i for i in range(g.dim()) if g.shape[i] == 1 and g.squeeze(i).shape == e.shape]
    if squeezed:
        i = squeezed[0]
        ok = p.close(e, g.squeeze(i))
        out.append(
            Diagnosis(
                "extra_axis",
                0.85 if ok else 0.5,
                Text(
                    f"{p.name} 多了一个大小为 1 的轴（第 {i} 维）：形状 {_shape(g)}，应为 {_shape(e)}"
                    + ("；去掉它之后数值正确（多余的 keepdim=True 或 unsqueeze？）" if ok else ""),
                    f"{p.name} has an extra axis of size 1 (axis {i}): shape {_shape(g)}, expected {_shape(e)}"
                    + (
                        "; without it the values are right (a keepdim=True or an unsqueeze too many?)"
                        if ok
                        else ""
                    ),
                ),
            )
        )
        return out
    missing = [i for i in range(e.dim()) if e.shape[i] == 1 and e.squeeze(i).shape == g.shape]
    if missing:
        i = missing[0]
        ok = p.close(e, g.unsqueeze(i))
        out.append(
            Diagnosis(
                "missing_axis",
                0.85 if ok else 0.5,
                Text(
                    f"{p.name} 少了一个大小为 1 的轴（第 {i} 维）：形状 {_shape(g)}，应为 {_shape(e)}"
                    + ("；补上之后数值正确（少了 keepdim=True？）" if ok else ""),
                    f"{p.name} lacks an axis of size 1 (axis {i}): shape {_shape(g)}, expected {_shape(e)}"
                    + ("; with it the values are right (a missing keepdim=True?)" if ok else ""),
                ),
            )
        )
        return out
    if g.numel() == e.numel() and g.numel() and p.close(e, g.reshape(e.shape)):
        out.append(
            Diagnosis(
                "reshaped",
                0.8,
                Text(
                    f"{p.name} 的元素都对，顺序也对，只是形状是 {_shape(g)}，应为 {_shape(e)}：最后的 reshape/view 不对",
                    f"{p.name} holds the right elements in the right order, but in shape {_shape(g)} instead "
                    f"of {_shape(e)}: the final reshape or view is off",
                ),
            )
        )
        return out
    try:
        joint = torch.broadcast_shapes(g.shape, e.shape)  # type: ignore[no-untyped-call]
    except RuntimeError:
        return out
    if joint == e.shape:
        out.append(
            Diagnosis(
                "broadcast",
                0.4,
                Text(
                    f"{p.name} 的形状 {_shape(g)} 能广播成应有的 {_shape(e)}，但它本身小了：某个轴被求和/平均掉了，"
                    "或者结果里少了一维",
                    f"{p.name} has shape {_shape(g)}, which broadcasts to the expected {_shape(e)} but is "
                    "smaller: an axis was reduced away, or one is missing",
                ),
            )
        )
    elif joint == g.shape:
        out.append(
            Diagnosis(
                "broadcast",
                0.4,
                Text(
                    f"{p.name} 的形状 {_shape(g)} 比应有的 {_shape(e)} 大，是它广播后的样子：有两个张量在不该广播的地方"
                    "相互广播了（比如 (n,) 与 (n, 1) 相加）",
                    f"{p.name} has shape {_shape(g)}, larger than the expected {_shape(e)}, which broadcasts "
                    "to it: two tensors broadcast where they should not (say (n,) plus (n, 1))",
                ),
            )
        )
    return out
