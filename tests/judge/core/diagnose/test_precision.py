"""Errors of precision: a step in the last place, or growing with magnitude or position."""

from __future__ import annotations

import torch

from judge.core.checkers import allclose, ulp
from tests.judge.core.diagnose.factories import diagnoses, kinds, make_case, tensor


def test_one_ulp_in_bf16_is_an_intermediate_precision() -> None:
    e = tensor(8, 64).bfloat16()
    got = (e.float() * (1 + 2**-8)).bfloat16()  # one step up in most elements
    (d, *_) = diagnoses({"y": e}, {"y": got}, make_case(ulp(0, 0.0)))
    assert d.kind == "ulps" and "fp32" in d.text.en


def test_error_growing_with_position() -> None:
    e = tensor(1, 64)
    drift = torch.linspace(0, 1e-2, 64)
    got = e + drift * e.sign()
    assert "error_grows_with_position" in kinds(
        {"y": e}, {"y": got}, make_case(allclose(rtol=1e-5, atol=1e-5))
    )
