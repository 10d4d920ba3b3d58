"""Drawn from the same distribution: for random values, such as a freshly initialised weight.

A random initialisation cannot be compared element by element: a learner may draw the same
distribution in another order, with another call or another generator state, and be right.
What the statement promises is the distribution, so this checker asks whether the learner's
tensor and the reference's look like two samples of one distribution. The judge computes it
from the two observed tensors, outside the learner's process: a case that computed the
statistics itself would run them where the learner's code can change what they return.

Three tests, each at `z` standard errors of the difference between two independent samples of
n values (z = 6: a correct sample fails any of them with probability about 2e-9):

- the mean: |mean(got) - mean(expected)| <= z · s · sqrt(2 / n);
- the standard deviation: |std(got) - std(expected)| <= z · s · sqrt((k - 1) / 4 · 2 / n), with s
  and the kurtosis k of the reference's sample (k = 3 for a normal distribution);
- the shape (two-sample Kolmogorov-Smirnov): the largest gap between the two empirical
  cumulative distributions is at most c · sqrt(2 / n), with c = sqrt(ln(2 / a) / 2) for the
  two-sided normal tail a of z (c = 3.22 for z = 6). A uniform draw with the right mean and
  standard deviation is 0.057 away from a normal one; at n = 64000 the bound is 0.018.

NaN, inf and -inf are counted, not placed: a sample must hold as many of each as the
reference's. A reference whose values are all equal is a point mass: every value must equal
it. The tests are meant for samples of hundreds of values or more; below that they allow
wide differences (the shape test allows every gap below about 20 values).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import torch

from judge.core.checkers.base import Mismatch, fmt_value, structural_mismatch
from judge.core.texts import Text


def _two_sided_tail(z: float) -> float:
    return math.erfc(z / math.sqrt(2.0))


def ks_statistic(a: torch.Tensor, b: torch.Tensor) -> tuple[float, float]:
    """The two-sample Kolmogorov-Smirnov distance of two 1-D float64 samples, and where it is
    largest: (sup over x of |F_a(x) - F_b(x)|, that x). Ties are counted exactly."""
    sa, sb = a.sort().values, b.sort().values
    points = torch.cat([sa, sb])
    fa = torch.searchsorted(sa, points, right=True).double() / max(sa.numel(), 1)
    fb = torch.searchsorted(sb, points, right=True).double() / max(sb.numel(), 1)
    gap = (fa - fb).abs()
    at = int(gap.argmax())
    return float(gap[at]), float(points[at])


def _counts(t: torch.Tensor) -> tuple[int, int, int]:
    return int(torch.isnan(t).sum()), int((t == math.inf).sum()), int((t == -math.inf).sum())


@dataclass(frozen=True)
class Distribution:
    z: float = 6.0
    name: str = "distribution"
    # Not element by element: an element's error means nothing here (for error maps and tools).
    elementwise: ClassVar[bool] = False

    def describe(self) -> str:
        return f"distribution (mean, std and two-sample KS within {self.z:g} standard errors)"

    def excess(self, expected: torch.Tensor, got: torch.Tensor) -> None:
        return None  # two samples of one distribution differ everywhere, element by element

    def ks_bound(self, n: int) -> float:
        c = math.sqrt(math.log(2.0 / _two_sided_tail(self.z)) / 2.0)
        return c * math.sqrt(2.0 / max(n, 1))

    def allowed(self, expected: torch.Tensor) -> dict[str, float]:
        """What the tests allow for this reference sample (finite values, float64)."""
        n = expected.numel()
        s = float(expected.std()) if n > 1 else 0.0
        kurtosis = float(((expected - expected.mean()) ** 4).mean()) / s**4 if s > 0 else 3.0
        return {
            "mean": self.z * s * math.sqrt(2.0 / max(n, 1)),
            "std": self.z * s * math.sqrt(max(kurtosis - 1.0, 0.0) / 4.0 * 2.0 / max(n, 1)),
            "ks": self.ks_bound(n),
        }

    def check(self, path: str, expected: torch.Tensor, got: torch.Tensor) -> Mismatch | None:
        if (m := structural_mismatch(path, expected, got)) is not None:
            return m
        e = expected.detach().reshape(-1).to(torch.float64)
        g = got.detach().reshape(-1).to(torch.float64)
        if torch.equal(e, g) or e.numel() == 0:
            return None
        ce, cg = _counts(e), _counts(g)
        if ce != cg:
            return Mismatch(path, _special_text(ce, cg))
        e, g = e[torch.isfinite(e)], g[torch.isfinite(g)]
        if e.numel() == 0:
            return None
        if bool((e == e[0]).all()):
            if bool((g == e[0]).all()):
                return None
            return Mismatch(path, _point_mass_text(float(e[0]), g))
        return self._compare(path, e, g)

    def _compare(self, path: str, e: torch.Tensor, g: torch.Tensor) -> Mismatch | None:
        tol = self.allowed(e)
        n = e.numel()
        me, mg = float(e.mean()), float(g.mean())
        se, sg = float(e.std()), float(g.std())
        parts: list[Text] = []
        if not abs(mg - me) <= tol["mean"]:
            parts.append(_stat_text("均值", "mean", me, mg, tol["mean"]))
        if not abs(sg - se) <= tol["std"]:
            parts.append(_stat_text("标准差", "std", se, sg, tol["std"]))
        ks, at = ks_statistic(e, g)
        if not ks <= tol["ks"]:
            below_e = float((e <= at).double().mean())
            below_g = float((g <= at).double().mean())
            parts.append(
                Text(
                    f"分布的形状不同：两者的累积分布最多相差 {ks:.3g}（允许 {tol['ks']:.3g}），"
                    f"在 x = {fmt_value(at)} 处：参考样本有 {100 * below_e:.1f}% 的值 ≤ x，"
                    f"你的有 {100 * below_g:.1f}%",
                    f"the shape of the distribution differs: the two cumulative distributions are up to "
                    f"{ks:.3g} apart (allowed {tol['ks']:.3g}), at x = {fmt_value(at)}: "
                    f"{100 * below_e:.1f}% of the reference's sample is <= x, {100 * below_g:.1f}% of yours",
                )
            )
        if not parts:
            return None
        head = Text(
            f"不逐元素比较：随机值只比较分布（{n} 个值，允许 {self.z:g} 个标准误差）。",
            f"not compared element by element: random values are compared as a distribution ({n} values, "
            f"{self.z:g} standard errors allowed).",
        )
        return Mismatch(path, Text.join([head, *parts], sep=" "))


def _stat_text(zh: str, en: str, expected: float, got: float, tol: float) -> Text:
    return Text(
        f"{zh}应约为 {fmt_value(expected)}（参考样本的值，允许 ±{tol:.2g}），你的是 {fmt_value(got)}；",
        f"{en} should be about {fmt_value(expected)} (the reference's sample; ±{tol:.2g} allowed), "
        f"yours is {fmt_value(got)};",
    )


def _special_text(expected: tuple[int, int, int], got: tuple[int, int, int]) -> Text:
    return Text(
        f"NaN / inf / -inf 的个数应为 {expected[0]} / {expected[1]} / {expected[2]}，"
        f"你的是 {got[0]} / {got[1]} / {got[2]}",
        f"the numbers of NaN / inf / -inf should be {expected[0]} / {expected[1]} / {expected[2]}, "
        f"yours are {got[0]} / {got[1]} / {got[2]}",
    )


def _point_mass_text(value: float, got: torch.Tensor) -> Text:
    other = int((got != value).sum())
    return Text(
        f"参考的值全都是 {fmt_value(value)}，你的有 {other} 个不是",
        f"every value of the reference is {fmt_value(value)}; {other} of yours are not",
    )


def distribution(z: float = 6.0) -> Distribution:
    if not z > 0:
        raise ValueError("distribution's z must be positive")
    return Distribution(z)
