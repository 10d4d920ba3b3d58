"""A contiguous input beside the same values as a view (`contiguous`, `view`, `*_view`):
right for the contiguous one only."""

from __future__ import annotations

from tests.judge.core.diagnose.factories import diagnoses, kinds, tensor


def test_right_for_contiguous_wrong_for_the_view() -> None:
    y = tensor(2, 4, 8)
    # What reading a transposed view's storage row by row gives: the values in another order.
    scrambled = y.transpose(1, 2).contiguous().reshape(2, 4, 8)
    (d, *_) = diagnoses(
        {"contiguous": y, "transposed_view": y}, {"contiguous": y, "transposed_view": scrambled}
    )
    assert d.kind == "view_input_wrong"
    assert "the contiguous input (`contiguous`) is right" in d.text.en
    assert "`transposed_view`" in d.text.en and "the same values for both" in d.text.en
    assert ".contiguous()" in d.text.zh and "连续的输入（`contiguous`）是对的" in d.text.zh


def test_views_may_be_dicts_and_several() -> None:
    y, s = tensor(2, 4), tensor(2, 3, seed=1)
    want = {
        "contiguous": {"y": y, "state": s},
        "view": {"y": y, "state": s},
        "non_contiguous": {"y": y, "state": s},
    }
    got = {
        "contiguous": {"y": y, "state": s},
        "view": {"y": y, "state": s},
        "non_contiguous": {"y": y, "state": s * 2},
    }
    (d, *_) = diagnoses({"case": want}, {"case": got})
    assert (
        d.kind == "view_input_wrong"
        and "`case.non_contiguous`" in d.text.en
        and "`case.view`" not in d.text.en
    )


def test_not_when_the_contiguous_input_is_wrong_too() -> None:
    y = tensor(2, 4, 8)
    assert "view_input_wrong" not in kinds({"contiguous": y, "view": y}, {"contiguous": y + 1, "view": y + 1})


def test_not_for_keys_that_only_look_alike() -> None:
    y = tensor(2, 4, 8)
    assert "view_input_wrong" not in kinds(
        {"contiguous": y, "preview": y}, {"contiguous": y, "preview": y + 1}
    )
