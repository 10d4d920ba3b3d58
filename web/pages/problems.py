"""The problem list (with the reader's progress), a problem's page, and the leaderboard."""

from __future__ import annotations

from dataclasses import dataclass
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
from web.submissions.parts import PartStatus, part_statuses

router = APIRouter(include_in_schema=False)

# The course's capstone (module qwen.model): the whole model, built from every other part. The
# problem list counts the learner's progress toward it, and its page calls its parts "your model".
MODEL_PROBLEM = "217"


@dataclass(frozen=True)
class ModelProgress:
    """How many of the capstone's parts the learner has solved."""

    problem: str
    solved: int
    total: int


def model_progress(platform: Platform, db: Session, user_id: int, listed: set[str]) -> ModelProgress | None:
    """None when the capstone is not offered (or has no parts)."""
    capstone = platform.problems.get(MODEL_PROBLEM)
    if capstone is None or MODEL_PROBLEM not in listed or not capstone.part_problems:
        return None
    statuses = part_statuses(db, user_id, capstone)
    return ModelProgress(MODEL_PROBLEM, sum(s.solved for s in statuses), len(statuses))


def page_parts(platform: Platform, db: Session, user_id: int | None, problem_id: str) -> list[PartStatus]:
    """The parts a problem's solutions may import, with the reader's own state of each."""
    problem = platform.problems.get(problem_id)
    if problem is None or not problem.part_problems:
        return []
    return part_statuses(db, user_id, problem)


@router.get("/", response_class=HTMLResponse)
@router.get("/problems", response_class=HTMLResponse)
def problem_list(
    request: Request,
    principal: PageUserDep,
    platform: PlatformDep,
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
        model=model_progress(platform, db, user.id, {p.id for p in listed}) if user else None,
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
        parts=page_parts(platform, db, user.id if user else None, problem.id),
        model_problem=MODEL_PROBLEM,
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
