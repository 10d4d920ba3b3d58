"""Right only for the default eps: a case that calls with several eps values, keyed by name.

In one dict, a key `eps_<value>` (also `eps=<value>`, `eps <value>`: "eps_1e-2", "eps=1e-5")
holds the result of a call with that eps; `eps_default`, or any sibling that does not name an
eps ("y"), holds a call with the default one. Problem 204's l2norm case observes
{"y": l2norm(x), "eps_1e-2": l2norm(x, eps=1e-2)}. When every default call is right and a call
with another eps is wrong, the eps given does not reach the computation as it should; when the
wrong result is exactly the default call's (and the reference's two differ), it is ignored.
"""

from __future__ import annotations

import re
from typing import Any

from judge.core.casekit import Case
from judge.core.diagnose.probe import Diagnosis
from judge.core.diagnose.tree import first_in_dicts, has_tensor, join, right
from judge.core.texts import Text

KIND = "default_eps_only"
LABEL = Text("只有默认的 eps 是对的", "right only for the default eps")
STRENGTH = 0.93
EPS_KEY = re.compile(r"^eps[_= ]?(?P<value>default|[-+0-9.eE]+)$")
MAX_LISTED = 3


def diagnose(case: Case, expected: Any, got: Any) -> list[Diagnosis]:
    return first_in_dicts(case, expected, got, _in_dict)


def _in_dict(case: Case, path: str, want: dict[Any, Any], have: dict[Any, Any]) -> Diagnosis | None:
    named = {k: EPS_KEY.match(k) for k in want if isinstance(k, str) and k in have and has_tensor(want[k])}
    given = [k for k, m in named.items() if m is not None and m.group("value") != "default"]
    default = [k for k, m in named.items() if m is None or m.group("value") == "default"]
    if not given or not default:
        return None
    if not all(right(case, join(path, k), want[k], have[k]) for k in default):
        return None
    wrong = [k for k in given if not right(case, join(path, k), want[k], have[k])]
    if not wrong:
        return None
    listed = ", ".join(f"`{join(path, k)}`" for k in wrong[:MAX_LISTED])
    ok = ", ".join(f"`{join(path, k)}`" for k in default[:MAX_LISTED])
    # The wrong result is the default call's, where the reference's two differ: the eps was ignored.
    ignored = [
        k
        for k in wrong
        for d in default
        if right(case, join(path, k), have[d], have[k]) and not right(case, join(path, k), want[d], want[k])
    ]
    if ignored:
        why = Text(
            f"{', '.join(f'`{join(path, k)}`' for k in ignored[:MAX_LISTED])} 与默认 eps 的结果完全相同："
            "传进来的 eps 没有用上（写死了一个常数？存了 self.eps 却没用？参数没有传下去？）",
            f"{', '.join(f'`{join(path, k)}`' for k in ignored[:MAX_LISTED])} equals the default eps's result "
            "exactly: the eps passed in is never used (a constant written in, self.eps stored but not read, "
            "the argument not passed on?)",
        )
    else:
        why = Text(
            "换一个 eps 时你的结果变化得和参考不一样：eps 有没有一直传到用它的地方，又是不是加在题目说的位置"
            "（例如平方根里面，加在平方的均值上）？默认的 eps 很小，放错位置也看不出来",
            "with another eps your result moves differently from the reference's: does the eps reach the place "
            "it is used, and is it added where the statement puts it (inside the root, to the mean of squares, "
            "say)? The default eps is so small that a misplaced one does not show",
        )
    return Diagnosis(
        KIND,
        STRENGTH,
        Text(
            f"默认 eps 的结果（{ok}）是对的，换了 eps 的 {listed} 不对。{why.zh}",
            f"the result with the default eps ({ok}) is right, and {listed}, with another eps, is wrong: {why.en}",
        ),
    )
