"""My submissions, and one submission's page (its code read-only, its results as they arrive)."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from typing import Annotated
from urllib.parse import urlencode

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import HTMLResponse, Response

from web.deps import DbDep, DbText, IdPath
from web.pages.common import PageUserDep, to_login
from web.pages.templating import page_language, render
from web.problems.service import current_titles
from web.submissions import service

router = APIRouter(include_in_schema=False)


# The filters of My submissions: anything else is no filter (a stale or hand-made link).
VERDICTS = ("AC", "WA", "CE", "RE", "TLE", "MLE", "OLE", "SE")
MODES = ("submit", "run")
FilterText = Annotated[DbText | None, Query(max_length=16)]
CSV_COLUMNS = ("id", "problem", "title", "mode", "status", "verdict", "score", "max_score", "created_at")


@dataclass(frozen=True)
class Filters:
    """My submissions' filters from the query string (the page's and its CSV's)."""

    problem: str | None
    verdict: str | None
    mode: str | None

    def query(self) -> str:
        return urlencode(
            {
                k: v
                for k, v in (("problem", self.problem), ("verdict", self.verdict), ("mode", self.mode))
                if v
            }
        )


def filters(problem: FilterText = None, verdict: FilterText = None, mode: FilterText = None) -> Filters:
    return Filters(problem or None, verdict if verdict in VERDICTS else None, mode if mode in MODES else None)


FiltersDep = Annotated[Filters, Depends(filters)]


@router.get("/submissions", response_class=HTMLResponse)
def submissions_page(request: Request, principal: PageUserDep, db: DbDep, chosen: FiltersDep) -> Response:
    if principal is None:
        return to_login(request)
    rows = service.my_submissions(db, principal.user, chosen.problem, 200, chosen.verdict, chosen.mode)
    return render(
        request,
        "submissions.html",
        principal,
        rows=rows,
        titles=current_titles(db),
        problem=chosen.problem or "",
        verdict=chosen.verdict or "",
        mode=chosen.mode or "",
        verdicts=VERDICTS,
        query=chosen.query(),
    )


@router.get("/submissions.csv")
def submissions_csv(request: Request, principal: PageUserDep, db: DbDep, chosen: FiltersDep) -> Response:
    """My submissions as the page filters them, for a spreadsheet: UTF-8 with a BOM (so that a
    spreadsheet reads Chinese titles), one row per submission, newest first, without code."""
    if principal is None:
        return to_login(request)
    rows = service.my_submissions(db, principal.user, chosen.problem, 10_000, chosen.verdict, chosen.mode)
    titles = current_titles(db)
    lang = page_language(request, principal.user)
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(
        ["id", "problem", "title", "mode", "status", "verdict", "score", "max_score", "created_at"]
    )
    for s in rows:
        zh, en = titles.get(s.problem_id, ("", ""))
        title = en if lang == "en" else zh
        writer.writerow(
            [
                s.id,
                s.problem_id,
                title,
                s.mode,
                s.status,
                s.verdict or "",
                s.score,
                s.max_score,
                s.created_at.isoformat(),
            ]
        )
    return Response(
        "\ufeff" + out.getvalue(),
        media_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": 'attachment; filename="my-submissions.csv"'},
    )


@router.get("/submissions/{submission_id}", response_class=HTMLResponse)
def submission_page(submission_id: IdPath, request: Request, principal: PageUserDep, db: DbDep) -> Response:
    if principal is None:
        return to_login(request)
    # Someone else's: a 404 page. The report in the page's language, as the script asks for it.
    sub = service.read_submission(db, submission_id, principal.user, page_language(request, principal.user))
    return render(
        request,
        "submission.html",
        principal,
        sub=sub,
        titles=current_titles(db),
        page_data={"submission": sub.model_dump(mode="json")},
    )
