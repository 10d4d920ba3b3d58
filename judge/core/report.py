"""The judge's report: per-case results and the submission verdict, as JSON or a readable table."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from judge.core.diagnose.kinds import kind_name
from judge.core.diagnose.probe import Diagnosis
from judge.core.texts import EMPTY, LANGUAGES, Text
from judge.core.verdicts import Verdict, label

# The stored report's format: 2 added "version", and per case "line" and "missing_problem"
# (reports stored before carry no version).
REPORT_VERSION = 2


def diagnosis_dict(diagnosis: Diagnosis, lang: str | None = None) -> dict[str, Any]:
    """A diagnosis as the report stores it (both languages) or shows it (`lang`)."""
    label_text = kind_name(diagnosis.kind)
    if lang is None:
        return {
            "kind": diagnosis.kind,
            "strength": diagnosis.strength,
            "label": label_text.to_dict(),
            "message": diagnosis.text.to_dict(),
        }
    return {"kind": diagnosis.kind, "label": label_text.get(lang), "message": diagnosis.text.get(lang)}


@dataclass
class CaseResult:
    name: str
    public: bool
    verdict: Verdict
    score: int
    max_score: int
    time_ms: float | None  # None: not told (a hidden case's time, as the site shows a learner)
    message: Text = EMPTY
    hint: Text = EMPTY
    description: Text = EMPTY
    # Why it fails, from expected and got alone (judge.core.diagnose), strongest first.
    diagnoses: list[Diagnosis] = field(default_factory=list)
    # A failing tensor of a public case as a small grid of error / tolerance (judge.core.errormap).
    error_map: dict[str, Any] | None = None
    # False when the case never ran (the run stopped before it, or the module did not load):
    # its time_ms is then 0 by construction and is shown as "—", not as a measured time.
    ran: bool = True
    # The line of the learner's solution file its error points at (a compile error's, or the
    # innermost frame of theirs in a traceback); None when that is in another file (one of
    # their parts), unknown, or from a sealed (hidden) run.
    line: int | None = None
    # The problem to solve first, when it fails because a part that problem makes is missing.
    missing_problem: str | None = None
    # A failing public case's: what it drew from its Rng (judge.core.runner.inputs), and expected
    # against got at the first differing positions (judge.core.compared). Never on a hidden case.
    inputs: list[dict[str, Any]] | None = None
    compared: list[dict[str, Any]] | None = None

    def to_dict(self, lang: str | None = None) -> dict[str, Any]:
        """`lang` None keeps both languages (what is stored); "zh" or "en" gives that one only."""

        def pick(t: Text) -> Any:
            return t.to_dict() if lang is None else t.get(lang)

        out: dict[str, Any] = {
            "name": self.name,
            "public": self.public,
            "verdict": str(self.verdict),
            "score": self.score,
            "max_score": self.max_score,
            "time_ms": self.time_ms,
            "ran": self.ran,
            "message": pick(self.message),
            "hint": pick(self.hint),
            "description": pick(self.description),
            "diagnoses": [diagnosis_dict(d, lang) for d in self.diagnoses],
            "line": self.line,
            "missing_problem": self.missing_problem,
        }
        if self.error_map is not None:
            out["error_map"] = self.error_map
        if self.public and self.inputs:
            out["inputs"] = self.inputs
        if self.public and self.compared:
            out["compared"] = self.compared
        return out


@dataclass(frozen=True)
class PartUse:
    """A part the submission could import: whose code it was, and whether it was imported."""

    problem: str
    module: str
    origin: str  # reference, learner, file or missing
    used: bool

    def to_dict(self) -> dict[str, Any]:
        return {"problem": self.problem, "module": self.module, "origin": self.origin, "used": self.used}


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
    log: str = ""  # what the learner's code printed (tail), in the public cases' job only
    warnings: list[Text] = field(default_factory=list)
    parts: list[PartUse] = field(default_factory=list)
    # Whose output `log` is: "public", the job that held the public cases only (every report
    # since hidden cases run apart); reports stored before say nothing, and a submit's may echo
    # hidden inputs.
    log_scope: str = "public"

    @classmethod
    def system_error(cls, problem: str, message: Text) -> Report:
        """A judgement that could not be made (the judge failed, never the learner's code): SE,
        no cases, nothing scored, and `message` saying why as its one warning."""
        return cls(problem, Verdict.SE, 0, 0, "", 0.0, [], warnings=[message])

    def to_dict(self, lang: str | None = None) -> dict[str, Any]:
        return {
            "version": REPORT_VERSION,
            "problem": self.problem,
            "verdict": str(self.verdict),
            "score": self.score,
            "max_score": self.max_score,
            "backend": self.backend,
            "time_ms": self.time_ms,
            "cases": [c.to_dict(lang) for c in self.cases],
            "elapsed_ms": self.elapsed_ms,
            "log": self.log,
            "log_scope": self.log_scope,
            "warnings": [w.to_dict() if lang is None else w.get(lang) for w in self.warnings],
            "parts": [p.to_dict() for p in self.parts],
        }

    def to_json(self, lang: str | None = None) -> str:
        return json.dumps(self.to_dict(lang), ensure_ascii=False, indent=2)


def _time(case: CaseResult) -> str:
    """A case's time for the table: "—" where it never ran or its time is not told."""
    if not case.ran or case.time_ms is None:
        return f"{'—':>9}"
    return f"{case.time_ms:>7.1f}ms"


def _indent(text: str, prefix: str = "      ") -> str:
    return "\n".join(prefix + line for line in text.splitlines())


def render_table(report: Report, title: str = "", lang: str = "zh") -> str:
    """The report as a table for a terminal, in one language."""
    if lang not in LANGUAGES:
        lang = "zh"
    zh = lang == "zh"
    lines = []
    head = f"{'题目' if zh else 'Problem'} {report.problem}"
    if title:
        head += f"  {title}"
    lines.append(f"{head}   [backend: {report.backend}]")
    for w in report.warnings:
        lines.append(f"  ! {w.get(lang)}")
    width = max([len(c.name) for c in report.cases] + [4])
    lines.append(f"  {'case':<{width}}  {'':6}  {'verdict':<7}  {'score':>7}  {'time':>9}")
    for c in report.cases:
        vis = "public" if c.public else "hidden"
        score = f"{c.score}/{c.max_score}"
        lines.append(f"  {c.name:<{width}}  {vis:6}  {c.verdict!s:<7}  {score:>7}  {_time(c)}")
        if c.verdict != Verdict.AC:
            if c.message:
                lines.append(_indent(c.message.get(lang)))
            for d in c.diagnoses:
                lines.append(_indent(("诊断：" if zh else "diagnosis: ") + d.text.get(lang)))
            if c.error_map is not None:
                from judge.core.errormap import render_text

                lines.append(_indent(render_text(c.error_map, lang)))
            if c.hint:
                lines.append(_indent(("提示：" if zh else "hint: ") + c.hint.get(lang)))
    lines.append("")
    name = label(report.verdict, lang)
    if zh:
        lines.append(
            f"结果：{report.verdict}（{name}）   得分：{report.score}/{report.max_score}   "
            f"你的代码用时 {report.time_ms:.0f} ms（评测共 {report.elapsed_ms:.0f} ms）"
        )
    else:
        lines.append(
            f"Verdict: {report.verdict} ({name})   Score: {report.score}/{report.max_score}   "
            f"your code: {report.time_ms:.0f} ms (judging took {report.elapsed_ms:.0f} ms)"
        )
    if report.log.strip():
        lines.append("你的代码的输出（末尾）：" if zh else "Your code printed (tail):")
        lines.append(_indent(report.log.strip()[-1500:], "  | "))
    return "\n".join(lines)
