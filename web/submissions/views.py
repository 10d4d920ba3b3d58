"""What a reader may see of a submission: learners get hidden cases as verdict and score only."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel

from web.submissions.models import Submission

HIDDEN_CASE_FIELDS = ("name", "public", "verdict", "score", "max_score", "time_ms")


class CaseOut(BaseModel):
    name: str
    public: bool
    verdict: str
    score: int
    max_score: int
    time_ms: float
    message: str | None = None
    hint: str | None = None
    description: str | None = None


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


class SubmissionDetail(SubmissionSummary):
    username: str
    code: str
    problem_version: str | None  # content hash of the package version it was judged against
    time_ms: float | None  # the learner's cases, measured inside the sandbox
    cases: list[CaseOut]
    log: str | None
    warnings: list[str]


def summary(sub: Submission) -> SubmissionSummary:
    return SubmissionSummary(
        id=sub.id,
        problem_id=sub.problem_id,
        mode=sub.mode,
        status=sub.status,
        verdict=sub.verdict,
        # A submission waiting for a rejudge keeps its old score for ranking; it has none to show.
        score=sub.score if sub.status == "done" else None,
        max_score=sub.max_score if sub.status == "done" else None,
        created_at=sub.created_at,
        finished_at=sub.finished_at,
    )


def visible_cases(report: dict[str, Any] | None, full: bool) -> list[CaseOut]:
    """Hidden cases' messages hold expected values and inputs: only admins see them."""
    out = []
    for case in (report or {}).get("cases", []):
        if full or case.get("public"):
            out.append(CaseOut(**{k: case.get(k) for k in CaseOut.model_fields if k in case}))
        else:
            out.append(CaseOut(**{k: case[k] for k in HIDDEN_CASE_FIELDS}))
    return out


def detail(sub: Submission, username: str, version: str | None, full: bool) -> SubmissionDetail:
    report = sub.report or {}
    # A submit's printed output may echo hidden inputs; a run only sees public cases.
    log = report.get("log") if (full or sub.mode == "run") else None
    return SubmissionDetail(
        **summary(sub).model_dump(),
        username=username,
        code=sub.code,
        problem_version=version,
        time_ms=report.get("time_ms"),
        cases=visible_cases(report, full),
        log=log,
        warnings=list(report.get("warnings", [])),
    )
