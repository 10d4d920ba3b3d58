"""Parameter and state names: a bias the layer must not have (or must have), a name spelt
differently. Reads every dict key and string of the observation trees, since cases observe
names both as `state_dict` layouts ({name: shape}) and as sorted lists."""

from __future__ import annotations

from typing import Any

from judge.core.diagnose.probe import Diagnosis
from judge.core.texts import Text

# Names look like dotted module paths; other strings (dtype names, outcomes) are not names.
MAX_SHOWN = 3


def names_in(tree: Any) -> set[str]:
    out: set[str] = set()
    if isinstance(tree, dict):
        for key, value in tree.items():
            if isinstance(key, str):
                out.add(key)
            out |= names_in(value)
    elif isinstance(tree, (list, tuple)):
        for value in tree:
            out |= names_in(value)
    elif isinstance(tree, str):
        out.add(tree)
    return out


def _dotted(name: str) -> bool:
    return "." in name and " " not in name


def _listed(names: list[str]) -> str:
    shown = ", ".join(f"`{n}`" for n in names[:MAX_SHOWN])
    return shown + (f" (+{len(names) - MAX_SHOWN})" if len(names) > MAX_SHOWN else "")


def diagnose(expected: Any, got: Any) -> list[Diagnosis]:
    want, have = names_in(expected), names_in(got)
    extra = sorted(n for n in have - want if _dotted(n))
    missing = sorted(n for n in want - have if _dotted(n))
    out: list[Diagnosis] = []
    extra_bias = [n for n in extra if n.rsplit(".", 1)[-1] == "bias"]
    missing_bias = [n for n in missing if n.rsplit(".", 1)[-1] == "bias"]
    if extra_bias:
        out.append(
            Diagnosis(
                "extra_bias",
                0.95,
                Text(
                    f"多出了 {_listed(extra_bias)}：nn.Linear 默认带偏置，而这些投影没有偏置，构造时要写 bias=False",
                    f"unexpected {_listed(extra_bias)}: nn.Linear has a bias by default, and these projections "
                    "have none: build them with bias=False",
                ),
            )
        )
    elif missing_bias:
        out.append(
            Diagnosis(
                "missing_bias",
                0.9,
                Text(
                    f"缺少 {_listed(missing_bias)}：这些层要有偏置（bias=True）",
                    f"missing {_listed(missing_bias)}: these layers have a bias (bias=True)",
                ),
            )
        )
    # The same leaf name under another path: a module attribute named differently.
    left = [n for n in missing if n not in missing_bias]
    right = [n for n in extra if n not in extra_bias]
    pairs = [(m, e) for m in left for e in right if m.rsplit(".", 1)[-1] == e.rsplit(".", 1)[-1] and m != e]
    renamed = {m: e for m, e in pairs if sum(1 for mm, _ in pairs if mm == m) == 1}
    if renamed:
        shown = "; ".join(f"`{e}` (≠ `{m}`)" for m, e in list(renamed.items())[:MAX_SHOWN])
        out.append(
            Diagnosis(
                "renamed",
                0.85,
                Text(
                    f"名字不一样：{shown}。检查点按名字加载，子模块的属性名要和题目一致",
                    f"named differently: {shown}. Checkpoints load by name, so submodule attributes must be "
                    "named as the statement says",
                ),
            )
        )
    return out
