"""The judge's report: per-case results and the submission verdict, as JSON or a readable table."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

from judge.verdicts import LABELS, Verdict


@dataclass
class CaseResult:
    name: str
    public: bool
    verdict: Verdict
    score: int
    max_score: int
    time_ms: float
    message: str = ""
    hint: str = ""
    description: str = ""


@dataclass
class Report:
    problem: str
    verdict: Verdict
    score: int
    max_score: int
    backend: str
    time_ms: float  # the learner's cases, as timed inside the runner (no sandbox start-up)
    cases: list[CaseResult]
    elapsed_ms: float = 0.0  # the whole judgement, sandbox start-up included
    log: str = ""  # what the learner's code printed (tail)
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["verdict"] = str(self.verdict)
        for c in d["cases"]:
            c["verdict"] = str(c["verdict"])
        return d

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, indent=2)


def _indent(text: str, prefix: str = "      ") -> str:
    return "\n".join(prefix + line for line in text.splitlines())


def render_table(report: Report, title: str = "") -> str:
    lines = []
    head = f"题目 Problem {report.problem}"
    if title:
        head += f"  {title}"
    lines.append(f"{head}   [backend: {report.backend}]")
    for w in report.warnings:
        lines.append(f"  ! {w}")
    width = max([len(c.name) for c in report.cases] + [4])
    lines.append(f"  {'case':<{width}}  {'':6}  {'verdict':<7}  {'score':>7}  {'time':>9}")
    for c in report.cases:
        vis = "public" if c.public else "hidden"
        score = f"{c.score}/{c.max_score}"
        lines.append(f"  {c.name:<{width}}  {vis:6}  {c.verdict!s:<7}  {score:>7}  {c.time_ms:>7.1f}ms")
        if c.verdict != Verdict.AC:
            if c.message:
                lines.append(_indent(c.message))
            if c.hint:
                lines.append(_indent("提示 hint: " + c.hint))
    lines.append("")
    lines.append(
        f"结果 Verdict: {report.verdict} ({LABELS[report.verdict]})   "
        f"得分 Score: {report.score}/{report.max_score}   "
        f"用时 your code: {report.time_ms:.0f} ms (judging took {report.elapsed_ms:.0f} ms)"
    )
    if report.log.strip():
        lines.append("你的代码的输出 Your code printed (tail):")
        lines.append(_indent(report.log.strip()[-1500:], "  | "))
    return "\n".join(lines)
