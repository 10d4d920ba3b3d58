"""What a reader may see of a submission: learners get hidden cases as verdict and score only."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel

from judge.core.texts import Text, split_pair
from web.submissions.models import Mode, Submission, SubmissionStatus

# What a learner sees of a hidden case: no message (it holds expected values and indices), no
# picture of the error, diagnoses by kind only (their sentences name shapes and indices), and
# no time: the code chooses how long a case takes, so a time could spell out what it read of
# the hidden case, a number per case per submission.
HIDDEN_CASE_FIELDS = ("name", "public", "verdict", "score", "max_score", "ran")


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


def _text(raw: Any, lang: str) -> str | None:
    """A stored text in the reader's language (reports kept before languages were kept apart
    hold one string with both)."""
    if raw is None or raw == "":
        return None
    return Text.from_dict(raw).get(lang) or None


def visible_cases(report: dict[str, Any] | None, full: bool, lang: str = "zh") -> list[CaseOut]:
    """Hidden cases' messages hold expected values and inputs: only admins see them. A hidden
    case still teaches: its description, the kinds of its diagnoses and a listed mistake's hint."""
    out = []
    for case in (report or {}).get("cases", []):
        shown = full or bool(case.get("public"))
        diagnoses = [
            DiagnosisOut(
                kind=str(d.get("kind")),
                label=_text(d.get("label"), lang),
                message=_text(d.get("message"), lang) if shown else None,
            )
            for d in case.get("diagnoses", [])
            if isinstance(d, dict)
        ]
        out.append(
            CaseOut(
                **{k: case[k] for k in HIDDEN_CASE_FIELDS},
                time_ms=case.get("time_ms") if shown else None,
                message=_text(case.get("message"), lang) if shown else None,
                hint=_text(case.get("hint"), lang),
                description=_text(case.get("description"), lang),
                diagnoses=diagnoses,
                error_map=case.get("error_map") if shown else None,
            )
        )
    return out


def detail(
    sub: Submission, username: str, version: str | None, full: bool, lang: str = "zh"
) -> SubmissionDetail:
    report = sub.report or {}
    # The log is the public cases' job's output (`log_scope`); a submit judged before hidden
    # cases ran apart printed in the same process as them, so its log may echo hidden inputs.
    public_log = sub.mode == Mode.RUN or report.get("log_scope") == "public"
    log = report.get("log") if (full or public_log) else None
    return SubmissionDetail(
        **summary(sub).model_dump(),
        username=username,
        code=sub.code,
        problem_version=version,
        time_ms=report.get("time_ms") if full else _public_time(report),
        cases=visible_cases(report, full, lang),
        log=log,
        # Both languages apart; reports stored before kept "中文\nEnglish" in one string.
        warnings=[
            (Text.from_dict(w) if isinstance(w, dict) else split_pair(str(w))).get(lang)
            for w in report.get("warnings", [])
        ],
        parts=[PartOut(**p) for p in report.get("parts", []) if isinstance(p, dict)],
    )


def _public_time(report: dict[str, Any]) -> float | None:
    """The time of the cases a learner may see the times of (the public ones)."""
    if "time_ms" not in report:
        return None
    times = [c.get("time_ms") or 0.0 for c in report.get("cases", []) if c.get("public")]
    return round(float(sum(times)), 1)
