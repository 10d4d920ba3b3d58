"""The problem list (with the reader's progress), a problem's page, and the leaderboard."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, Response
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool

from web.deps import DbDep, DbText, PlatformDep
from web.pages.common import PageUserDep, page_reader
from web.pages.templating import page_language, render
from web.platform import Platform
from web.problems import service as problems
from web.problems.service import PROGRESS_STATES
from web.scores import service as scores

router = APIRouter(include_in_schema=False)


@router.get("/", response_class=HTMLResponse)
@router.get("/problems", response_class=HTMLResponse)
def problem_list(
    request: Request,
    principal: PageUserDep,
    db: DbDep,
    chapter: Annotated[DbText | None, Query(max_length=64)] = None,
    status: Annotated[DbText | None, Query(max_length=16)] = None,
) -> HTMLResponse:
    user = principal.user if principal else None
    listed = problems.list_problems(db, user)
    chapters = sorted({p.chapter for p in listed})
    shown = [
        p
        for p in listed
        if (not chapter or p.chapter == chapter) and (status not in PROGRESS_STATES or p.status == status)
    ]
    progress = {
        "solved": sum(p.status == "solved" for p in listed),
        "total": len(listed),
        "score": sum(p.best_score or 0 for p in listed),
        "max_score": sum(p.max_score for p in listed),
    }
    return render(
        request,
        "problems.html",
        principal,
        problems=shown,
        chapters=chapters,
        chapter=chapter or "",
        status=status if status in PROGRESS_STATES else "",
        statuses=PROGRESS_STATES,
        progress=progress,
    )


@router.get("/problems/{problem_id}", response_class=HTMLResponse)
async def problem_page(
    problem_id: DbText, request: Request, platform: PlatformDep, db: DbDep
) -> HTMLResponse:
    # The busiest page: the reader's lookup and the page in one trip to a thread (PageUserDep
    # and a plain-function route take a trip each).
    return await run_in_threadpool(_problem_page, problem_id, request, platform, db)


def _problem_page(problem_id: str, request: Request, platform: Platform, db: Session) -> HTMLResponse:
    principal = page_reader(request, platform, db)
    user = principal.user if principal else None
    # 404 (as a page) for an unknown id.
    problem = problems.get_problem(db, platform.statements, problem_id, user)
    lang = page_language(request, user)
    source = problem.statement.en_markdown if lang == "en" and problem.statement.en_markdown else None
    statement_html = platform.statements.for_page(source or problem.statement.zh_markdown)
    data = {
        "problem": {
            "id": problem.id,
            "starter": problem.starter,
            "public_cases": problem.public_cases,
            "max_score": problem.max_score,
            "version": problem.version,
        },
        "loggedIn": user is not None,
        "loginUrl": f"/login?next=/problems/{problem.id}",
    }
    return render(
        request,
        "problem.html",
        principal,
        problem=problem,
        statement_html=statement_html,
        statement_fallback=lang == "en" and source is None,
        page_data=data,
    )


@router.get("/leaderboard", response_class=HTMLResponse)
def leaderboard_page(request: Request, principal: PageUserDep, db: DbDep) -> HTMLResponse:
    return render(request, "leaderboard.html", principal, rows=scores.leaderboard(db, 200))


@router.get("/highlight.css")
def highlight_stylesheet(platform: PlatformDep) -> Response:
    return Response(
        platform.statements.highlight_css,
        media_type="text/css",
        headers={"Cache-Control": "public, max-age=3600"},
    )
