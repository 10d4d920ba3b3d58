"""The course as a learner follows it: chapters in order with their progress, and around one
problem its chapter, what to solve first and what comes next."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel
from sqlalchemy import select
from sqlalchemy.orm import Session, load_only

from web.auth.models import User
from web.errors import not_found
from web.problems.models import ProblemVersion
from web.problems.service import COURSE_ORDER, CourseChapter, ProblemSummary, Title, course_chapter
from web.scores.models import Score


class ChapterProgress(BaseModel):
    """One chapter of the course map: its problems in order, how many the reader solved."""

    chapter: CourseChapter
    problems: list[str]
    solved: int  # 0 without an account
    total: int


class CourseStep(BaseModel):
    """A problem named from another one's page: a prerequisite or the next problem."""

    id: str
    title: Title
    solved: bool | None  # null without an account


class CourseLinks(BaseModel):
    chapter: CourseChapter
    prerequisites: list[CourseStep]
    next: CourseStep | None  # the next problem in course order; null after the last one


def course_map(listed: Sequence[ProblemSummary]) -> list[ChapterProgress]:
    """The problems (in course order, as list_problems gives them) grouped by chapter."""
    chapters: dict[tuple[int, str], ChapterProgress] = {}
    for p in listed:
        key = (p.course_chapter.position, p.course_chapter.title.zh)
        group = chapters.setdefault(
            key, ChapterProgress(chapter=p.course_chapter, problems=[], solved=0, total=0)
        )
        group.problems.append(p.id)
        group.total += 1
        group.solved += p.status == "solved"
    return list(chapters.values())


# Every offered problem's id, titles, chapter and prerequisites in course order; without the
# statements and the starter, which are the bulk of a row.
_COURSE = (
    select(ProblemVersion)
    .options(
        load_only(
            ProblemVersion.problem_id,
            ProblemVersion.title_zh,
            ProblemVersion.title_en,
            ProblemVersion.chapter,
            ProblemVersion.chapter_number,
            ProblemVersion.chapter_zh,
            ProblemVersion.chapter_en,
            ProblemVersion.chapter_position,
            ProblemVersion.prerequisites,
        )
    )
    .where(ProblemVersion.current.is_(True))
    .order_by(*COURSE_ORDER)
)


def _solved(db: Session, user: User | None) -> set[str] | None:
    if user is None:
        return None
    return set(db.scalars(select(Score.problem_id).where(Score.user_id == user.id, Score.solved.is_(True))))


def course_links(db: Session, user: User | None, problem_id: str) -> CourseLinks:
    """The chapter, the prerequisites with the reader's state of each, and the next problem."""
    versions = {v.problem_id: v for v in db.scalars(_COURSE)}
    this = versions.get(problem_id)
    if this is None:
        raise not_found("problem", problem_id)
    solved = _solved(db, user)

    def step(v: ProblemVersion) -> CourseStep:
        return CourseStep(
            id=v.problem_id,
            title=Title(zh=v.title_zh, en=v.title_en),
            solved=None if solved is None else v.problem_id in solved,
        )

    order = list(versions)
    after = order.index(problem_id) + 1
    return CourseLinks(
        chapter=course_chapter(this),
        prerequisites=[step(versions[p]) for p in this.prerequisites or [] if p in versions],
        next=step(versions[order[after]]) if after < len(order) else None,
    )
