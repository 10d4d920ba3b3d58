"""My submissions, and one submission's page (its code read-only, its results as they arrive)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, Response

from web.deps import DbDep, DbText, IdPath
from web.pages.common import PageUserDep, to_login
from web.pages.templating import page_language, render
from web.problems.service import current_titles
from web.submissions import service

router = APIRouter(include_in_schema=False)


@router.get("/submissions", response_class=HTMLResponse)
def submissions_page(
    request: Request,
    principal: PageUserDep,
    db: DbDep,
    problem: Annotated[DbText | None, Query(max_length=16)] = None,
) -> Response:
    if principal is None:
        return to_login(request)
    rows = service.my_submissions(db, principal.user, problem or None, 200)
    return render(
        request, "submissions.html", principal, rows=rows, titles=current_titles(db), problem=problem or ""
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
