"""Right for a contiguous input, wrong for the same values as a view (transposed, sliced,
expanded): the code reads the input's memory as if it were laid out row by row.

In one dict, the key `contiguous` holds the result for a contiguous input and keys that name
a view hold the result for the same values passed as a non-contiguous view: `view`, `view_*`
or `*_view` ("transposed_view", "view_sliced"), `non_contiguous` or `strided`. Each may be a
tensor or a dict of them. When `contiguous` is right and a view is wrong, the diagnosis says
so, and notes whether the reference's results for the two are the same values.
"""

from __future__ import annotations

import re
from typing import Any

from judge.core.casekit import Case
from judge.core.diagnose.probe import Diagnosis
from judge.core.diagnose.tree import first_in_dicts, has_tensor, join, right
from judge.core.texts import Text

KIND = "view_input_wrong"
LABEL = Text("连续的输入对，视图输入不对", "right for a contiguous input, wrong for a view")
STRENGTH = 0.93
CONTIGUOUS = "contiguous"
VIEW_KEY = re.compile(r"^(view|view_.+|.+_view|non_?contiguous|strided)$")
MAX_LISTED = 3


def diagnose(case: Case, expected: Any, got: Any) -> list[Diagnosis]:
    return first_in_dicts(case, expected, got, _in_dict)


def _in_dict(case: Case, path: str, want: dict[Any, Any], have: dict[Any, Any]) -> Diagnosis | None:
    if CONTIGUOUS not in want or CONTIGUOUS not in have or not has_tensor(want[CONTIGUOUS]):
        return None
    base = join(path, CONTIGUOUS)
    views = [
        k for k in want if isinstance(k, str) and VIEW_KEY.match(k) and k in have and has_tensor(want[k])
    ]
    if not views or not right(case, base, want[CONTIGUOUS], have[CONTIGUOUS]):
        return None
    wrong = [k for k in views if not right(case, join(path, k), want[k], have[k])]
    if not wrong:
        return None
    listed = ", ".join(f"`{join(path, k)}`" for k in wrong[:MAX_LISTED])
    same = all(right(case, join(path, k), want[CONTIGUOUS], want[k]) for k in wrong)
    values = (
        Text("（参考对两者给出的是同样的值）", " (the reference gives the same values for both)")
        if same
        else Text("", "")
    )
    return Diagnosis(
        KIND,
        STRENGTH,
        Text(
            f"连续的输入（`{base}`）是对的，同样的值以视图（非连续）传入时 {listed} 不对{values.zh}：你的代码按行连续的"
            "内存布局去读输入（as_strided、untyped_storage()/data_ptr()、对底层存储做 view，或者假定了步长）。"
            "要么先 .contiguous()，要么只按形状索引、不碰内存布局",
            f"the contiguous input (`{base}`) is right, and {listed}, the same values passed as a "
            f"non-contiguous view, is wrong{values.en}: your code reads the input's memory as if it were laid "
            "out row by row (as_strided, untyped_storage() or data_ptr(), a view of the underlying storage, or "
            "strides assumed). Call .contiguous() first, or index by shape and leave the layout alone",
        ),
    )
