"""Verdicts and the fixed order that decides a submission's verdict from its cases."""

from __future__ import annotations

from enum import Enum


class Verdict(str, Enum):  # noqa: UP042 (not StrEnum: the practice kit runs on Python 3.10)
    AC = "AC"  # accepted
    WA = "WA"  # wrong answer
    RE = "RE"  # runtime error
    TLE = "TLE"  # time limit exceeded
    MLE = "MLE"  # memory limit exceeded
    OLE = "OLE"  # output limit exceeded
    CE = "CE"  # does not parse, lacks every entry point, or a case uses one it lacks
    SE = "SE"  # the judge failed; never the learner's fault

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(str(self.value), spec)


# Worst first. A submission's verdict is the first of these that any of its cases has.
SEVERITY: tuple[Verdict, ...] = (
    Verdict.SE,
    Verdict.CE,
    Verdict.MLE,
    Verdict.TLE,
    Verdict.OLE,
    Verdict.RE,
    Verdict.WA,
    Verdict.AC,
)

# The name of each verdict in the two languages. CE means the code could not be loaded: it does
# not parse, an import fails, a forbidden call runs at import, an entry point is missing. Python
# compiles nothing a learner would call "compiling", so both languages name the loading: "Load
# error" and 无法加载, in the judge's texts and on the site alike.
NAMES: dict[Verdict, tuple[str, str]] = {
    Verdict.AC: ("通过", "Accepted"),
    Verdict.WA: ("答案错误", "Wrong answer"),
    Verdict.RE: ("运行出错", "Runtime error"),
    Verdict.TLE: ("超时", "Time limit exceeded"),
    Verdict.MLE: ("超内存", "Memory limit exceeded"),
    Verdict.OLE: ("输出超限", "Output limit exceeded"),
    Verdict.CE: ("无法加载", "Load error"),
    Verdict.SE: ("评测系统错误", "System error"),
}


def label(verdict: Verdict, lang: str) -> str:
    zh, en = NAMES[verdict]
    return en if lang == "en" else zh


def worst(verdicts: list[Verdict]) -> Verdict:
    """The most severe verdict of the list; AC for an empty list."""
    present = set(verdicts)
    for v in SEVERITY:
        if v in present:
            return v
    return Verdict.AC
