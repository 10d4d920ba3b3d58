"""A tensor under a key that names a batch (`batch`, `batched`, `*_batch`, `*_batched`): right for
batch item 0 only."""

from __future__ import annotations

from judge.core.diagnose.batch import names_a_batch
from tests.judge.core.diagnose.factories import diagnoses, kinds, tensor


def test_right_for_item_0_only() -> None:
    e = tensor(3, 2, 5, 4)
    got = e.clone()
    got[1:] += 0.5
    (d, *_) = diagnoses({"y_batched": e}, {"y_batched": got})
    assert d.kind == "batch_item_0_only"
    assert "`y_batched`: batch item 0 is right and the other 2 are wrong" in d.text.en
    assert "mask[0]" in d.text.en and "只有第 0 项是对的" in d.text.zh


def test_every_item_got_item_0s_result() -> None:
    e = tensor(2, 6, 4)
    got = e[:1].expand(2, 6, 4).clone()
    (d, *_) = diagnoses({"batched": {"o": e}}, {"batched": {"o": got}})
    assert d.kind == "batch_item_0_only" and "Every item got exactly item 0's result" in d.text.en


def test_not_without_a_batch_key_nor_when_another_item_is_right() -> None:
    e = tensor(3, 5, 4)
    got = e.clone()
    got[1:] += 0.5
    assert "batch_item_0_only" not in kinds({"y": e}, {"y": got})
    got[2] = e[2]
    assert "batch_item_0_only" not in kinds({"batch": e}, {"batch": got})


def test_which_keys_name_a_batch() -> None:
    assert names_a_batch("batch") and names_a_batch("a.y_batched") and names_a_batch("decode_batch.o")
    assert names_a_batch("batched[2]")
    # batch_1 names a batch of one (problem 216); unbatched is not a batch.
    assert not names_a_batch("batch_1") and not names_a_batch("unbatched_y") and not names_a_batch("y")
