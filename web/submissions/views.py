"""What a reader may see of a submission: learners get hidden cases as verdict and score only."""

from __future__ import annotations

import logging
from datetime import datetime
from enum import Enum
from typing import Any

from pydantic import BaseModel, Field

from web.judging.records import (
    HIDDEN_CASE_FIELDS,
    StoredCase,
    StoredReport,
    StoredText,
    UnreadableRecord,
    read_report,
)
from web.submissions.models import Mode, Submission, SubmissionStatus

log = logging.getLogger(__name__)


class DiagnosisOut(BaseModel):
    kind: str
    label: str | None = None  # the kind in a few words: all a hidden case says
    message: str | None = None  # withheld on hidden cases


class CaseOut(BaseModel):
    name: str
    public: bool
    verdict: str
    score: int
    max_score: int
    time_ms: float | None  # None: a hidden case, read by a learner
    ran: bool = True  # False: the case never ran, so time_ms is 0 by construction, not measured
    message: str | None = None
    hint: str | None = None
    description: str | None = None
    diagnoses: list[DiagnosisOut] = []
    error_map: dict[str, Any] | None = None
    # The line of the learner's code the error points at (not in one of their parts' files).
    line: int | None = None
    # The problem to solve first: the code imports its part, which the learner has not solved.
    missing_problem: str | None = None
    # A failing public case only: what it drew ({name, shape, dtype, values when small}) and,
    # per failing observation, {path, expected, got, positions: [{index, expected, got}]}.
    inputs: list[dict[str, Any]] | None = None
    compared: list[dict[str, Any]] | None = None


class PartOut(BaseModel):
    """A part the judgement offered the code (another problem's solution, as a module of the
    course package): whose code it was (learner, reference, file or missing) and whether the
    code imported it."""

    problem: str
    module: str
    origin: str
    used: bool


class KeptResult(BaseModel):
    """The best result a submission had before an admin's rejudge judged it lower: the new
    result is the submission's own, and this one still counts for the learner's best score."""

    verdict: str
    score: int
    max_score: int | None
    version: int | None  # the package version (problem.toml) it was judged on, if recorded


class SubmissionSummary(BaseModel):
    id: int
    problem_id: str
    mode: str
    status: str
    verdict: str | None
    score: int | None
    max_score: int | None
    created_at: datetime
    finished_at: datetime | None
    kept: KeptResult | None = None  # set when a rejudge judged it lower than it was


class SubmissionDetail(SubmissionSummary):
    username: str
    code: str
    problem_version: str | None  # content hash of the package version it was judged against
    time_ms: float | None  # the learner's cases, measured inside the sandbox (a learner: the public ones)
    cases: list[CaseOut]
    log: str | None
    warnings: list[str]
    parts: list[PartOut] = []
    # While it runs: how far the judgement has come ({"done", "total", "stage"}; web.judging.queue).
    progress: dict[str, Any] | None = None
    # While it waits: how many jobs queued before it still wait.
    ahead: int | None = None
    unreadable: bool = Field(
        False, description="the judge's stored report cannot be read: verdict and score only (a bug)"
    )


def summary(sub: Submission) -> SubmissionSummary:
    return SubmissionSummary(
        id=sub.id,
        problem_id=sub.problem_id,
        mode=sub.mode,
        status=sub.status,
        verdict=sub.verdict,
        # A submission waiting for a rejudge keeps its old score for ranking; it has none to show.
        score=sub.score if sub.status == SubmissionStatus.DONE else None,
        max_score=sub.max_score if sub.status == SubmissionStatus.DONE else None,
        created_at=sub.created_at,
        finished_at=sub.finished_at,
        kept=kept_result(sub),
    )


def kept_result(sub: Submission) -> KeptResult | None:
    """While a rejudge waits or runs the submission has no new result yet: nothing to compare."""
    if sub.status != SubmissionStatus.DONE or sub.kept_score is None or sub.kept_verdict is None:
        return None
    return KeptResult(
        verdict=sub.kept_verdict, score=sub.kept_score, max_score=sub.kept_max_score, version=sub.kept_version
    )


def _text(text: StoredText, lang: str) -> str | None:
    return text.get(lang) or None


def visible_cases(report: StoredReport | None, full: bool, lang: str = "zh") -> list[CaseOut]:
    """Hidden cases' messages hold expected values and inputs: only admins see them. A hidden
    case still teaches: its description, the kinds of its diagnoses and a listed mistake's hint."""
    return [_case_out(case, full or case.public, lang) for case in (report.cases if report else [])]


def _case_out(case: StoredCase, shown: bool, lang: str) -> CaseOut:
    diagnoses = [
        DiagnosisOut(
            kind=d.kind,
            label=_text(d.label, lang) if d.label is not None else None,
            message=_text(d.message, lang) if shown else None,
        )
        for d in case.diagnoses
    ]
    return CaseOut(
        **_hidden_fields(case),
        time_ms=case.time_ms if shown else None,
        message=_text(case.message, lang) if shown else None,
        hint=_text(case.hint, lang),
        description=_text(case.description, lang),
        diagnoses=diagnoses,
        error_map=case.error_map if shown else None,
        line=case.line if shown else None,
        missing_problem=case.missing_problem if shown else None,
        # Public cases only, whoever reads (an admin too: the judge never records a hidden one's).
        inputs=case.inputs if case.public else None,
        compared=case.compared if case.public else None,
    )


def _hidden_fields(case: StoredCase) -> dict[str, Any]:
    """What every reader sees of a case, as `model_dump(include=HIDDEN_CASE_FIELDS, mode="json")`
    gives it (names, flags, numbers and the verdict's value), without a dump per case: a status
    read makes one for each of a report's cases."""
    fields = {name: getattr(case, name) for name in HIDDEN_CASE_FIELDS}
    return {name: value.value if isinstance(value, Enum) else value for name, value in fields.items()}


def stored_report(sub: Submission) -> StoredReport | None:
    """The submission's report (None while it waits), or UnreadableRecord."""
    return read_report(sub.report) if sub.report is not None else None


def detail(
    sub: Submission, username: str, version: str | None, full: bool, lang: str = "zh"
) -> SubmissionDetail:
    head = summary(sub).model_dump()
    try:
        report = stored_report(sub)
    except UnreadableRecord as exc:
        # The row's verdict and score are columns of their own: they are still shown.
        log.error("submission %s: %s", sub.id, exc)
        return SubmissionDetail(
            **head,
            username=username,
            code=sub.code,
            problem_version=version,
            time_ms=None,
            cases=[],
            log=None,
            warnings=[],
            unreadable=True,
        )
    # The log is the public cases' job's output (`log_scope`); a submit judged before hidden
    # cases ran apart printed in the same process as them, so its log may echo hidden inputs.
    public_log = sub.mode == Mode.RUN or (report is not None and report.log_scope == "public")
    return SubmissionDetail(
        **head,
        username=username,
        code=sub.code,
        problem_version=version,
        time_ms=(report.time_ms if full else _public_time(report)) if report else None,
        cases=visible_cases(report, full, lang),
        log=report.log if report is not None and (full or public_log) else None,
        warnings=[w.get(lang) for w in report.warnings] if report else [],
        parts=[PartOut(**p.model_dump()) for p in report.parts] if report else [],
        progress=sub.progress if sub.status == SubmissionStatus.RUNNING else None,
    )


def _public_time(report: StoredReport) -> float:
    """The time of the cases a learner may see the times of (the public ones)."""
    return round(float(sum(c.time_ms or 0.0 for c in report.cases if c.public)), 1)
