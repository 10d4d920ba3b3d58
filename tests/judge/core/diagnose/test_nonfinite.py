"""NaN or inf where the reference is finite: where first, and the likely cause."""

from __future__ import annotations

import torch

from tests.judge.core.diagnose.factories import diagnoses, kinds, tensor


def test_an_overflow_in_fp16() -> None:
    e = (tensor(4, 8) * 300).half()
    got = e.clone()
    got[1, 2] = float("inf")
    (d, *_) = diagnoses({"y": e}, {"y": got})
    assert d.kind == "overflow" and "[1, 2]" in d.text.en


def test_a_fully_masked_row_gives_nan_rows() -> None:
    e = torch.softmax(tensor(3, 5), -1)
    got = e.clone()
    got[1] = float("nan")
    assert kinds({"p": e}, {"p": got})[0] == "nan_rows"


def test_exp_of_a_large_number() -> None:
    e = tensor(3, 5) * 100
    got = e.clone()
    got[0, 0] = float("inf")
    assert kinds({"z": e}, {"z": got})[0] == "exp_overflow"
