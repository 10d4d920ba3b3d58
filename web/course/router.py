"""The course: chapters in order, prerequisites, the next problem, progress (issue 20, item 7)."""

from __future__ import annotations

from fastapi import APIRouter

from web.course import service
from web.course.service import ChapterProgress, CourseLinks
from web.deps import DbDep, DbText, OptionalUserDep
from web.problems.service import list_problems

router = APIRouter(prefix="/api/course", tags=["course"])


@router.get("", response_model=list[ChapterProgress])
def course_map(db: DbDep, user: OptionalUserDep) -> list[ChapterProgress]:
    """The chapters in course order, each with its problems and the reader's progress."""
    return service.course_map(list_problems(db, user))


@router.get("/problems/{problem_id}", response_model=CourseLinks)
def course_links(problem_id: DbText, db: DbDep, user: OptionalUserDep) -> CourseLinks:
    """A problem's chapter, its prerequisites (with the reader's state) and the next problem."""
    return service.course_links(db, user, problem_id)
