"""The problem list (with the reader's progress), a problem's page, and the leaderboard."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, Response
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool

from judge.authoring.package import Problem
from judge.authoring.starters import in_language
from web.course.service import ChapterProgress, course_links, course_map
from web.deps import DbDep, DbText, PlatformDep, ProblemsDep, StatementsDep
from web.pages.common import PageUserDep, page_reader
from web.pages.tags import tag_names
from web.pages.templating import page_language, render
from web.platform import Platform
from web.problems import service as problems
from web.problems.service import PROGRESS_STATES, CourseChapter, ProblemSummary
from web.scores import service as scores
from web.submissions.parts import PartStatus, part_statuses

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


def capstone_id(offered_problems: dict[str, Problem]) -> str | None:
    """The course's capstone (course.toml's `capstone`, module qwen.model): the whole model, built
    from every other part. The problem list counts the learner's progress toward it, and its page
    calls its parts "your model". None when the problems have no course or it names none."""
    # Every package of the folder reads the same course.toml; a copy of the values, since a
    # reload (web.problems.sync.replace_problems) may change the dict meanwhile.
    offered = list(offered_problems.values())
    course = offered[0].course if offered else None
    return course.capstone if course is not None else None


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


def page_parts(
    offered: dict[str, Problem], db: Session, user_id: int | None, problem_id: str
) -> list[PartStatus]:
    """The parts a problem's solutions may import, with the reader's own state of each."""
    problem = offered.get(problem_id)
    if problem is None or not problem.part_problems:
        return []
    return part_statuses(db, user_id, problem)


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
    principal = page_reader(request, platform, db)
    user = principal.user if principal else None
    # 404 (as a page) for an unknown id.
    problem = problems.get_problem(db, platform.statements, problem_id, user)
    lang = page_language(request, user)
    problem = problem.model_copy(update={"tags": tag_names(problem.tags, lang)})
    source = problem.statement.en_markdown if lang == "en" and problem.statement.en_markdown else None
    statement_html = platform.statements.for_page(source or problem.statement.zh_markdown)
    course = course_links(db, user, problem.id)
    parts = page_parts(platform.problems, db, user.id if user else None, problem.id)
    next_title = course.next and (course.next.title.zh if lang == "zh" else course.next.title.en)
    model = capstone_id(platform.problems)  # the page calls its parts "your model"; celebrated when AC
    data = {
        # After an accepted submit, course.js offers the next problem of the course.
        "course": {"next": {"id": course.next.id, "title": next_title} if course.next else None},
        "problem": {
            "id": problem.id,
            # Its comments in the reader's language, wrapped to the editor (judge.authoring.starters).
            "starter": in_language(problem.starter, lang),
            "public_cases": problem.public_cases,
            "max_score": problem.max_score,
            "version": problem.version,
        },
        "loggedIn": user is not None,
        # The problem that builds the whole model: its first accepted Submit is celebrated.
        "capstone": problem.id == model,
        "userId": user.id if user else None,  # whose drafts this browser keeps (web/frontend/src/drafts.js)
        "loginUrl": f"/login?next=/problems/{problem.id}",
    }
    return render(
        request,
        "problem.html",
        principal,
        problem=problem,
        statement_html=statement_html,
        statement_fallback=lang == "en" and source is None,
        parts=parts,
        course=course,
        model_problem=model,
        page_data=data,
    )


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
