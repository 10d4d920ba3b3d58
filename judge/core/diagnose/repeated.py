"""Right on the first call of an object, wrong on a later one: what the object keeps from call
to call (a cache, a counter, a position offset, a buffer written in place, a value memoised on
the first call).

A case observes several calls of one object, in the order it made them, in one of two ways:

- a list under one key, one item per call: {"steps": [out_1, out_2, out_3]}, each item a
  tensor, a tuple or a dict of them ({"o": ..., "state": ...}). Not a tuple: a tuple is one
  call's several results, (y, state);
- sibling keys numbered from 0 or 1 without a gap, whose stem is `call`, `step`, `update`,
  `decode` or `chunk`, then `_` or a space: {"update_1": ..., "update_2": ..., "update_3": ...}
  (problem 210's cache_basics), "step 1", "step 2" (217's decode_bf16, after its "prefill").
  Other numbered keys ("layer_0", "head_dim_5") are not calls.

Items without a tensor (lengths, shapes, outcomes) are not outputs and do not count. When the
first item is right and a later one is not, the diagnosis names the first wrong call; when a
wrong call returned exactly what the first call returned (and the reference's two differ), it
says so: a value kept from the first call.
"""

from __future__ import annotations

import re
from typing import Any

from judge.core.casekit import Case
from judge.core.diagnose.probe import Diagnosis
from judge.core.diagnose.tree import has_tensor, join, name, pairs, right
from judge.core.texts import Text

KIND = "later_call_wrong"
LABEL = Text("第一次调用对，之后的调用不对", "right on the first call, wrong on a later one")
STRENGTH = 0.92  # it locates the mistake in what the object carries between calls
# Numbered sibling keys are calls when their stem says so ("layer_0", "layer_1" are two layers).
NUMBERED = re.compile(r"^(?P<stem>call|step|update|decode|chunk)[_ ](?P<n>\d+)$")
MAX_LISTED = 3


def diagnose(case: Case, expected: Any, got: Any) -> list[Diagnosis]:
    for path, calls in _call_sequences(expected, got):
        found = _first_right_then_wrong(case, path, calls)
        if found is not None:
            return [found]
    return []


def _call_sequences(expected: Any, got: Any) -> list[tuple[str, list[tuple[str, Any, Any]]]]:
    """Each sequence of calls the trees hold: (how to name it, [(path of a call, expected, got)])."""
    out: list[tuple[str, list[tuple[str, Any, Any]]]] = []
    for path, want, have in pairs(expected, got):
        # A list: one item per call. A tuple is one call's several results, (y, state).
        if isinstance(want, list) and isinstance(have, (list, tuple)) and len(want) == len(have) >= 2:
            if all(has_tensor(item) for item in want):
                out.append(
                    (
                        name(path),
                        [(join(path, i), e, g) for i, (e, g) in enumerate(zip(want, have, strict=True))],
                    )
                )
        elif isinstance(want, dict) and isinstance(have, dict):
            out.extend(_numbered(path, want, have))
    return out


def _numbered(
    path: str, want: dict[Any, Any], have: dict[Any, Any]
) -> list[tuple[str, list[tuple[str, Any, Any]]]]:
    stems: dict[str, dict[int, Any]] = {}
    for key in want:
        m = NUMBERED.match(key) if isinstance(key, str) else None
        if m is not None and key in have:
            stems.setdefault(m.group("stem"), {})[int(m.group("n"))] = key
    out = []
    for by_n in stems.values():
        first = min(by_n)
        order = sorted(by_n)
        # Numbered from 0 or 1 without a gap: call 1, call 2, ... (not head_dim_5, head_dim_7).
        if len(order) < 2 or first not in (0, 1) or order != list(range(first, first + len(order))):
            continue
        keys = [by_n[n] for n in order]
        if all(has_tensor(want[k]) for k in keys):
            shown = f"`{join(path, keys[0])}` … `{join(path, keys[-1])}`"
            out.append((shown, [(join(path, k), want[k], have[k]) for k in keys]))
    return out


def _first_right_then_wrong(case: Case, where: str, calls: list[tuple[str, Any, Any]]) -> Diagnosis | None:
    first_path, first_want, first_have = calls[0]
    if not right(case, first_path, first_want, first_have):
        return None
    wrong = [i for i, (p, e, g) in enumerate(calls) if i and not right(case, p, e, g)]
    if not wrong:
        return None
    n = len(calls)
    first, kth = f"`{first_path}`", f"`{calls[wrong[0]][0]}`"
    # A wrong call that returned the first call's result, where the reference's two differ.
    repeated = [
        calls[i][0]
        for i in wrong
        if right(case, calls[i][0], first_have, calls[i][2])
        and not right(case, calls[i][0], first_want, calls[i][1])
    ]
    if repeated:
        shown = ", ".join(f"`{p}`" for p in repeated[:MAX_LISTED]) + (
            " …" if len(repeated) > MAX_LISTED else ""
        )
        verb = "is" if len(repeated) == 1 else "are"
        why = Text(
            f"{shown} 正是 {first} 的结果：某个值（结果本身，或算它用的张量：掩码、位置、表）在第一次调用时留下，之后被原样再用",
            f"{shown} {verb} exactly what {first} returned: a value (the result, or a tensor it is computed "
            "from: a mask, positions, a table) is kept from the first call and used again",
        )
    else:
        why = Text(
            "之后的调用与第一次的区别，是对象已经带着之前留下的东西：缓存、计数器、位置偏移、原地写过的缓冲区"
            "（留下了第一次调用的某个值？）",
            "what a later call has that the first has not is whatever the object kept from before: a cache, a "
            "counter, a position offset, a buffer written in place (a value kept from the first call?)",
        )
    return Diagnosis(
        KIND,
        STRENGTH,
        Text(
            f"{where} 是对同一个对象依次做的 {n} 次调用：其中第一次 {first} 是对的，从 {kth} 起不对。{why.zh}",
            f"{where} {'are' if ' … ' in where else 'holds'} {n} calls of one object in order: the first of them, "
            f"{first}, is right, and {kth} is the first that is wrong. {why.en[0].upper()}{why.en[1:]}",
        ),
    )
