"""Right except in a region: where the reference is 0 or -inf, or in some rows or heads."""

from __future__ import annotations

import torch

from tests.judge.core.diagnose.factories import diagnoses, kinds, tensor


def test_padded_positions_that_should_be_zero() -> None:
    e = tensor(2, 6, 4)
    e[:, 4:] = 0.0
    got = e.clone()
    got[:, 4:] = 0.25
    assert kinds({"y": e}, {"y": got})[0] == "wrong_where_zero"


def test_masked_scores_filled_with_a_finite_number() -> None:
    e = tensor(4, 4).masked_fill(torch.ones(4, 4, dtype=torch.bool).triu(1), float("-inf"))
    got = e.masked_fill(torch.isinf(e), -1e4)
    assert kinds({"s": e}, {"s": got})[0] == "wrong_where_masked"


def test_only_some_heads_are_wrong() -> None:
    e = tensor(2, 4, 5, 8)
    got = e.clone()
    got[:, 3] += 1.0
    (d, *_) = diagnoses({"y": e}, {"y": got})
    assert d.kind == "wrong_in_slices" and "[3]" in d.text.en and "axis 1" in d.text.en


def test_right_only_at_the_last_position_points_at_the_causal_mask() -> None:
    e = tensor(2, 5, 8)
    got = e.clone()
    got[:, :4] += 0.5
    (d, *_) = diagnoses({"y": e}, {"y": got})
    assert d.kind == "right_only_at_last" and "axis 1" in d.text.en and "causal mask" in d.text.en


def test_right_only_at_index_zero() -> None:
    e = tensor(6, 8)
    got = e.clone()
    got[1:] *= 1.3
    assert "right_only_at_first" in kinds({"y": e}, {"y": got})
