"""Right for batch item 0 only: something that belongs to each item of the batch is read for
the first one and used for all (positions[0], mask[0], lengths[0], .item(), a loop over the
batch that keeps only its first pass).

A tensor's first axis is the batch when its path names one: a key `batch` or `batched`, or
ending in `_batch` or `_batched` ("y_batched"), on the tensor itself or on a dict above it
({"batched": {"o": ..., "final_state": ...}}). (Not `batch_1`: that names a batch of one.)
When item 0 is right and every other item is wrong, the diagnosis says so, and whether every
item got item 0's result.
"""

from __future__ import annotations

import re

from judge.core.diagnose.probe import Diagnosis, Probe
from judge.core.texts import Text

KIND = "batch_item_0_only"
LABEL = Text("只有 batch 的第 0 项是对的", "right for batch item 0 only")
STRENGTH = 0.88  # above "wrong only in some rows" (which it makes precise), below a shift or a factor
BATCH_KEY = re.compile(r"^(.+_)?batch(ed)?$")
_PART = re.compile(r"[.\[\]]")


def names_a_batch(path: str) -> bool:
    return any(BATCH_KEY.match(part) for part in _PART.split(path) if part)


def diagnose(p: Probe) -> list[Diagnosis]:
    e, g = p.expected, p.got
    if not names_a_batch(p.path) or e.shape != g.shape or e.dim() == 0 or e.shape[0] < 2 or not p.usable():
        return []
    if not p.close(e[0], g[0]):
        return []
    if not all(not p.close(e[i], g[i]) for i in range(1, e.shape[0])):
        return []
    n = e.shape[0]
    copied = all(p.close(g[0], g[i]) and not p.close(e[0], e[i]) for i in range(1, n))
    also = (
        Text(
            "而且每一项得到的都正是第 0 项的结果。",
            " Every item got exactly item 0's result.",
        )
        if copied
        else Text("", "")
    )
    return [
        Diagnosis(
            KIND,
            STRENGTH,
            Text(
                f"{p.name} 的 batch 中只有第 0 项是对的，其余 {n - 1} 项都不对。{also.zh}"
                "每一项各自的东西（位置、掩码、长度、状态）是不是只取了第 0 项的、用在了整个 batch 上"
                "（positions[0]、mask[0]、lengths[0]、.item()、只走了一遍的按 batch 循环）？",
                f"{p.name}: batch item 0 is right and the other {n - 1} are wrong.{also.en} Is something each "
                "item has of its own (positions, a mask, a length, a state) taken from item 0 and used for the "
                "whole batch (positions[0], mask[0], lengths[0], .item(), a loop over the batch that runs once)?",
            ),
        )
    ]
