"""A class's report pages: an assignment's gradebook, the class leaderboard, similar submissions.

They render what the reports API returns (web.classes.export, board, similar), with the same
access rules: the gradebook and similar submissions for the class's instructor (or an admin),
the leaderboard for its members too. Anyone else gets the API's "not found", as a page.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, Response

from web.classes import board, export, similar
from web.deps import DbDep, DbText, IdPath, ProblemsDep
from web.pages.common import PageUserDep, to_login
from web.pages.templating import page_language, render
from web.problems.service import current_titles

router = APIRouter(include_in_schema=False)


@router.get("/classes/{class_id}/assignments/{assignment_id}/gradebook", response_class=HTMLResponse)
def gradebook_page(
    class_id: IdPath,
    assignment_id: IdPath,
    request: Request,
    principal: PageUserDep,
    db: DbDep,
    problems: ProblemsDep,
) -> Response:
    if principal is None:
        return to_login(request)
    group, book = export.read_gradebook(db, principal.user, class_id, assignment_id, problems)
    return render(
        request,
        "class_gradebook.html",
        principal,
        group=group,
        book=book,
        titles=current_titles(db),
        # The CSV's header in the page's language (the link is followed outside this page).
        csv_lang=page_language(request, principal.user),
    )


@router.get("/classes/{class_id}/leaderboard", response_class=HTMLResponse)
def class_board_page(class_id: IdPath, request: Request, principal: PageUserDep, db: DbDep) -> Response:
    if principal is None:
        return to_login(request)
    shown = board.class_board(db, principal.user, class_id)
    return render(request, "class_board.html", principal, board=shown, titles=current_titles(db))


@router.get("/classes/{class_id}/similar", response_class=HTMLResponse)
def similar_page(
    class_id: IdPath,
    request: Request,
    principal: PageUserDep,
    db: DbDep,
    problems: ProblemsDep,
    problem_id: Annotated[DbText | None, Query(max_length=16)] = None,
) -> Response:
    if principal is None:
        return to_login(request)
    found = similar.similar(db, principal.user, class_id, problem_id or None, problems)
    return render(
        request,
        "class_similar.html",
        principal,
        found=found,
        titles=current_titles(db),
        threshold_percent=round(found.threshold * 100),
    )
