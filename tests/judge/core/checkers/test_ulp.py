import pytest
import torch

from judge.core.checkers import allclose, ulp
from judge.core.checkers.ulp import ulp_distance


def _step(t: torch.Tensor, n: int) -> torch.Tensor:
    """t moved by n representable steps (same dtype), for positive t."""
    view = {torch.bfloat16: torch.int16, torch.float16: torch.int16, torch.float32: torch.int32}[t.dtype]
    return (t.view(view) + n).view(t.dtype)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, torch.float32])
def test_distance_counts_representable_steps(dtype: torch.dtype) -> None:
    x = torch.tensor([1.0, 3.5, 100.0], dtype=dtype)
    assert ulp_distance(x, _step(x, 1)).tolist() == [1, 1, 1]
    assert ulp_distance(x, _step(x, 3)).tolist() == [3, 3, 3]


def test_distance_across_zero() -> None:
    pos = torch.tensor([0.0], dtype=torch.bfloat16)
    neg = torch.tensor([-0.0], dtype=torch.bfloat16)
    assert ulp_distance(pos, neg).item() == 0
    tiny = _step(pos, 1)
    assert ulp_distance(-tiny, tiny).item() == 2


def test_max_ulps_and_fraction() -> None:
    e = torch.linspace(1, 2, 100).to(torch.bfloat16)
    one_off = e.clone()
    one_off[:20] = _step(e[:20], 1)
    assert ulp(1, 0.25).check("y", e, one_off) is None
    m = ulp(1, 0.1).check("y", e, one_off)
    assert m is not None and "20.0% > 10% allowed" in m.text.en
    two_off = e.clone()
    two_off[5] = _step(e[5:6], 2)[0]
    m = ulp(1, 1.0).check("y", e, two_off)
    assert m is not None and "max 2 ulp" in m.text.en and "[5]" in m.text.en


def test_bf16_statistics_pass_default_tolerance_but_not_ulp() -> None:
    """The reason the ulp checker exists: torch's bf16 tolerance accepts bf16 statistics."""
    g = torch.Generator().manual_seed(0)
    x = (torch.randn(8, 256, generator=g) * 3).bfloat16()
    xf = x.float()
    right = (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6)).bfloat16()
    wrong = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)
    assert allclose().check("y", right, wrong) is None
    assert ulp(1, 0.02).check("y", right, wrong) is not None


def test_nan_and_shape_rules_apply() -> None:
    e = torch.ones(3, dtype=torch.bfloat16)
    assert ulp().check("y", e, torch.ones(3, dtype=torch.float32)) is not None
    got = e.clone()
    got[1] = float("nan")
    m = ulp().check("y", e, got)
    assert m is not None and "NaN" in m.text.en


def test_bad_parameters() -> None:
    with pytest.raises(ValueError):
        ulp(-1)
    with pytest.raises(ValueError):
        ulp(1, 1.5)


def test_excess_counts_ulps_over_the_allowance() -> None:
    x = torch.tensor([1.0, 1.5, 2.0, 3.0], dtype=torch.bfloat16)
    got = torch.cat([x[:1], _step(x[1:2], 1), _step(x[2:3], 2), _step(x[3:], 6)])
    assert ulp(max_ulps=2).excess(x, got).tolist() == [0.0, 0.5, 1.0, 3.0]
    # With no ulp allowed, a step is twice too far, and the distance still grades the elements.
    assert ulp(max_ulps=0).excess(x, got).tolist() == [0.0, 2.0, 4.0, 12.0]


def test_excess_leaves_out_the_share_of_differing_elements() -> None:
    x = torch.tensor([1.0, 1.5], dtype=torch.bfloat16)
    got = _step(x, 1)
    checker = ulp(max_ulps=1, max_fraction=0.0)
    assert checker.check("y", x, got) is not None  # too many differ: a whole-tensor condition
    assert checker.excess(x, got).tolist() == [1.0, 1.0]
