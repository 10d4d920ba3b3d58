"""A call that had to refuse its input: it returned, or raised the wrong class, or refused an
input it had to take. Reads the observations that `judge.core.casekit.outcome` makes."""

from __future__ import annotations

from judge.core.casekit import read_outcome
from judge.core.diagnose.probe import Diagnosis
from judge.core.texts import Text


def diagnose(path: str, expected: object, got: object) -> list[Diagnosis]:
    want, have = read_outcome(expected), read_outcome(got)
    if want is None or have is None or want == have:
        return []
    name = f"`{path}`" if path else "the call"
    (must_raise, wanted), (raised, what) = want, have
    if must_raise and not raised:
        return [
            Diagnosis(
                "not_rejected",
                0.95,
                Text(
                    f"{name}：这个输入必须被拒绝（抛出 {wanted}），你的代码却照常返回了。在用到参数之前先检查它，"
                    f"不合法时自己 raise {wanted}（torch 往往会悄悄接受这样的值）",
                    f"{name}: this input must be refused (raise {wanted}), but your code went on and returned. "
                    f"Check the argument before you use it and raise {wanted} yourself (torch often takes such "
                    "a value without a word)",
                ),
            )
        ]
    if must_raise:
        return [
            Diagnosis(
                "wrong_exception",
                0.95,
                Text(
                    f"{name}：抛出的是 {what}，应为 {wanted}。{what} 多半来自 torch 内部，说明检查来得太晚或者没有："
                    f"在第一次计算之前检查参数，并抛出 {wanted}",
                    f"{name}: raised {what}, not {wanted}. A {what} usually comes from inside torch, so the check "
                    f"came too late or not at all: check the arguments before the first computation and raise "
                    f"{wanted}",
                ),
            )
        ]
    return [
        Diagnosis(
            "rejected_valid",
            0.95,
            Text(
                f"{name}：这个输入是合法的，你的代码却抛出了 {what}：检查的条件比题目要求的更严（边界值，比如 0 或 1？）",
                f"{name}: this input is valid, yet your code raised {what}: the check is stricter than the "
                "statement asks (a boundary value such as 0 or 1?)",
            ),
        )
    ]
