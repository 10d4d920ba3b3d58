"""My submissions, and one submission's page (its code read-only, its results as they arrive)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, Response
from sqlalchemy import select

from web.deps import DbDep, DbText, IdPath
from web.pages.common import PageUserDep, to_login
from web.pages.templating import page_language, render
from web.problems.models import ProblemVersion
from web.submissions.router import my_submissions, read_submission

router = APIRouter(include_in_schema=False)


def _titles(db: DbDep) -> dict[str, tuple[str, str]]:
    rows = db.scalars(select(ProblemVersion).where(ProblemVersion.current.is_(True)))
    return {v.problem_id: (v.title_zh, v.title_en) for v in rows}


@router.get("/submissions", response_class=HTMLResponse)
def submissions_page(
    request: Request,
    principal: PageUserDep,
    db: DbDep,
    problem: Annotated[DbText | None, Query(max_length=16)] = None,
) -> Response:
    if principal is None:
        return to_login(request)
    rows = my_submissions(principal.user, db, problem or None, 200)
    return render(
        request, "submissions.html", principal, rows=rows, titles=_titles(db), problem=problem or ""
    )


@router.get("/submissions/{submission_id}", response_class=HTMLResponse)
def submission_page(submission_id: IdPath, request: Request, principal: PageUserDep, db: DbDep) -> Response:
    if principal is None:
        return to_login(request)
    # Someone else's: a 404 page. The report in the page's language, as the script asks for it.
    sub = read_submission(submission_id, principal.user, db, page_language(request, principal.user))
    return render(
        request,
        "submission.html",
        principal,
        sub=sub,
        titles=_titles(db),
        page_data={"submission": sub.model_dump(mode="json")},
    )
