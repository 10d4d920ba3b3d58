"""The problem list (with the reader's progress), a problem's page, and the leaderboard."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, Response
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool

from judge.authoring.package import Problem
from web.auth.registration import registration_offered
from web.course.service import ChapterProgress, course_map
from web.db import statements_on_their_own
from web.deps import DbDep, DbText, PlatformDep, ProblemsDep, StatementsDep, preview_of
from web.errors import not_found
from web.language import Language
from web.pages.common import PageUserDep, page_reader
from web.pages.sheets import capstone_id, for_reader, sheet
from web.pages.tags import tag_names
from web.pages.templating import PAGE_HEADERS, assets, page_language, render, render_html
from web.platform import Platform
from web.problems import service as problems
from web.problems.service import PROGRESS_STATES, CourseChapter, ProblemSummary
from web.problems.standing import current_version_id, standing
from web.scores import service as scores
from web.submissions.parts import part_statuses

router = APIRouter(include_in_schema=False)


def chapter_key(c: CourseChapter) -> str:
    """What the chapter filter sends: the chapter's number ("6"), or a free label itself."""
    return str(c.number) if c.number is not None else c.title.zh


def in_chapter(p: ProblemSummary, chapter: str) -> bool:
    """The filter takes a chapter's number, or its one string as links made before the course
    had numbers of its own ("03 RMSNorm")."""
    return chapter in (p.chapter, chapter_key(p.course_chapter)) or (
        chapter.isdigit() and p.course_chapter.number == int(chapter)
    )


@dataclass(frozen=True)
class ChapterGroup:
    """A chapter on the list: its progress, its filter key and the problems of it that the
    filters let through."""

    progress: ChapterProgress
    key: str
    shown: list[ProblemSummary]


@dataclass(frozen=True)
class ModelProgress:
    """How many of the capstone's parts the learner has solved."""

    problem: str
    solved: int
    total: int


def model_progress(
    offered: dict[str, Problem], db: Session, user_id: int, listed: set[str]
) -> ModelProgress | None:
    """None when the capstone is not offered (or has no parts)."""
    model = capstone_id(offered)
    capstone = offered.get(model) if model is not None else None
    if capstone is None or capstone.id not in listed or not capstone.part_problems:
        return None
    statuses = part_statuses(db, user_id, capstone)
    return ModelProgress(capstone.id, sum(s.solved for s in statuses), len(statuses))


@router.get("/", response_class=HTMLResponse)
@router.get("/problems", response_class=HTMLResponse)
def problem_list(
    request: Request,
    principal: PageUserDep,
    offered: ProblemsDep,
    db: DbDep,
    chapter: Annotated[DbText | None, Query(max_length=64)] = None,
    status: Annotated[DbText | None, Query(max_length=16)] = None,
) -> HTMLResponse:
    user = principal.user if principal else None
    listed = problems.list_problems(db, user)  # in course order
    # The course map: every chapter with the reader's progress over all of it, whatever is filtered.
    chapters = course_map(listed)
    shown = [
        p
        for p in listed
        if (not chapter or in_chapter(p, chapter)) and (status not in PROGRESS_STATES or p.status == status)
    ]
    by_id = {p.id: p for p in shown}
    groups = [
        ChapterGroup(c, chapter_key(c.chapter), [by_id[i] for i in c.problems if i in by_id])
        for c in chapters
    ]
    progress = {
        "solved": sum(p.status == "solved" for p in listed),
        "total": len(listed),
        "score": sum(p.best_score or 0 for p in listed),
        "max_score": sum(p.max_score for p in listed),
    }
    lang = page_language(request, user)
    for group in groups:  # tags in the reader's language (web.pages.tags)
        group.shown[:] = [p.model_copy(update={"tags": tag_names(p.tags, lang)}) for p in group.shown]
    return render(
        request,
        "problems.html",
        principal,
        groups=[g for g in groups if g.shown],
        chapters=groups,
        # Nothing tried yet (or a visitor): point at the course's first problem.
        start_here=listed[0] if listed and all(p.status == "new" for p in listed) else None,
        min_submitters=problems.MIN_SUBMITTERS,
        chapter=chapter or "",
        status=status if status in PROGRESS_STATES else "",
        statuses=PROGRESS_STATES,
        progress=progress,
        model=model_progress(offered, db, user.id, {p.id for p in listed}) if user else None,
    )


@router.get("/problems/{problem_id}", response_class=HTMLResponse)
async def problem_page(
    problem_id: DbText, request: Request, platform: PlatformDep, db: DbDep
) -> HTMLResponse:
    # The busiest page: the reader's lookup and the page in one trip to a thread (PageUserDep
    # and a plain-function route take a trip each).
    return await run_in_threadpool(_problem_page, problem_id, request, platform, db)


def _problem_page(problem_id: str, request: Request, platform: Platform, db: Session) -> HTMLResponse:
    statements_on_their_own(db)  # reads only: no BEGIN and COMMIT around them
    principal = page_reader(request, platform, db)
    user = principal.user if principal else None
    lang = page_language(request, user)
    if user is None:
        version_id = current_version_id(db, problem_id)
        if version_id is None:
            raise not_found("problem", problem_id)  # 404 (as a page) for an unknown id
        html = _visitor_page(request, platform, db, problem_id, version_id, lang)
        db.commit()  # end the read here, in this thread: closing the session then waits on nothing
        return HTMLResponse(html, headers=PAGE_HEADERS)
    mine = standing(db, user.id, problem_id)
    if mine is None:
        raise not_found("problem", problem_id)
    kept = sheet(platform, db, problem_id, mine.version_id, lang)
    page = for_reader(platform, db, kept, user, mine)
    db.commit()
    return render(
        request,
        "problem.html",
        principal,
        problem=page.problem,
        statement_html=kept.statement_html,
        statement_fallback=kept.statement_fallback,
        parts=page.parts,
        course=page.course,
        model_problem=kept.model_problem,
        page_data=page.page_data,
    )


def _visitor_page(
    request: Request, platform: Platform, db: Session, problem_id: str, version_id: int, lang: Language
) -> str:
    """A visitor's page shows nothing of anyone: kept per version, language, Register link,
    bundle and path (not with a query string, whose values are the sender's, nor in a preview,
    whose banner changes with the files)."""
    registration = registration_offered(platform.factory, platform.settings)
    key = ("visitor", problem_id, version_id, lang, registration, assets(), request.url.path)
    cacheable = not request.url.query and preview_of(request) is None
    if cacheable:
        html: str | None = platform.statements.pages.get(key)
        if html is not None:
            return html
    since = platform.statements.pages.generation
    kept = sheet(platform, db, problem_id, version_id, lang)
    html = render_html(
        request,
        "problem.html",
        None,
        registration_open=registration,
        problem=kept.problem,
        statement_html=kept.statement_html,
        statement_fallback=kept.statement_fallback,
        parts=kept.parts,
        course=kept.course,
        model_problem=kept.model_problem,
        page_data=kept.page_data,
    )
    if cacheable and kept.version_id == version_id:
        platform.statements.pages.put(key, html, since)
    return html


@router.get("/leaderboard", response_class=HTMLResponse)
def leaderboard_page(request: Request, principal: PageUserDep, db: DbDep) -> HTMLResponse:
    return render(
        request,
        "leaderboard.html",
        principal,
        rows=scores.leaderboard(db, 200, principal.user if principal else None),
    )


@router.get("/highlight.css")
def highlight_stylesheet(statements: StatementsDep) -> Response:
    return Response(
        statements.highlight_css,
        media_type="text/css",
        headers={"Cache-Control": "public, max-age=3600"},
    )
