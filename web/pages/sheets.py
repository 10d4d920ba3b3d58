"""What a problem page shows that depends only on the package version and the reader's language
(the problem's "sheet": its statement as HTML, tags, starter, limits, chapter, prerequisites, next
problem and parts), built once per (version, language) and kept in `Statements.pages` until the
problems change (`Statements.forget()`: a reload here, another process's sync, a preview's save).
A visitor's whole page is kept as well, per version, language, Register link, bundle and path:
it shows nothing of anyone.

Every request still reads the problem's current version id (web.problems.standing), and every key
holds it: a new package version misses whatever was kept of the old one, even if a notice to
forget never came. A logged-in reader's page is rendered for them each time from the sheet and
their own standing (score, solved marks, kept best, CSRF token, name): nothing of theirs is kept.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy.orm import Session

from judge.authoring.starters import in_language
from web.auth.models import User
from web.course.service import CourseLinks, CourseStep, course_links
from web.errors import not_found
from web.language import Language
from web.pages.tags import tag_names
from web.platform import Platform
from web.problems import service as problems
from web.problems.service import ProblemDetail, changes_after
from web.problems.standing import Standing
from web.problems.sync import current_version
from web.submissions.parts import PartStatus, part_statuses


@dataclass(frozen=True)
class ProblemSheet:
    """One version of a problem's page in one language, as a visitor sees it."""

    version_id: int
    problem: ProblemDetail  # no score, status "new"; tags in the language
    statement_html: str
    statement_fallback: bool  # an English reader gets the Chinese statement (no English one)
    course: CourseLinks  # steps with no solved mark (None)
    parts: list[PartStatus]  # none solved
    model_problem: str | None  # the capstone's id (its parts are "your model")
    page_data: dict[str, Any]  # the visitor's; a reader's sets loggedIn and userId
    package_version: int | None  # for what changed since a reader's accepted best
    changes: dict[str, dict[str, str]] | None


def capstone_id(offered_problems: dict[str, Any]) -> str | None:
    """The course's capstone (course.toml's `capstone`, module qwen.model), or None."""
    # Every package of the folder reads the same course.toml; a copy of the values, since a
    # reload (web.problems.sync.replace_problems) may change the dict meanwhile.
    offered = list(offered_problems.values())
    course = offered[0].course if offered else None
    return course.capstone if course is not None else None


def sheet(platform: Platform, db: Session, problem_id: str, version_id: int, lang: Language) -> ProblemSheet:
    key = ("sheet", problem_id, version_id, lang)
    kept: ProblemSheet | None = platform.statements.pages.get(key)
    if kept is not None:
        return kept
    since = platform.statements.pages.generation
    built = _build(platform, db, problem_id, lang)
    # Kept under the version it was built from (a sync in between makes it the newer one's),
    # and not at all if the problems changed meanwhile.
    platform.statements.pages.put(("sheet", problem_id, built.version_id, lang), built, since)
    return built


def _build(platform: Platform, db: Session, problem_id: str, lang: Language) -> ProblemSheet:
    v = current_version(db, problem_id)
    if v is None:
        raise not_found("problem", problem_id)
    detail = problems.problem_detail(db, platform.statements, v, None, False)
    detail = detail.model_copy(update={"tags": tag_names(detail.tags, lang)})
    source = detail.statement.en_markdown if lang == "en" and detail.statement.en_markdown else None
    course = course_links(db, None, problem_id)
    package = platform.problems.get(problem_id)
    parts = part_statuses(db, None, package) if package is not None and package.part_problems else []
    model = capstone_id(platform.problems)
    next_title = course.next and (course.next.title.zh if lang == "zh" else course.next.title.en)
    page_data = {
        # After an accepted submit, course.js offers the next problem of the course.
        "course": {"next": {"id": course.next.id, "title": next_title} if course.next else None},
        "problem": {
            "id": detail.id,
            # Its comments in the reader's language, wrapped to the editor (judge.authoring.starters).
            "starter": in_language(detail.starter, lang),
            "public_cases": detail.public_cases,
            "max_score": detail.max_score,
            "version": detail.version,
        },
        "loggedIn": False,
        # The problem that builds the whole model: its first accepted Submit is celebrated.
        "capstone": detail.id == model,
        "userId": None,  # whose drafts this browser keeps (web/frontend/src/drafts.js)
        "loginUrl": f"/login?next=/problems/{detail.id}",
    }
    return ProblemSheet(
        version_id=v.id,
        problem=detail,
        statement_html=platform.statements.for_page(source or detail.statement.zh_markdown),
        statement_fallback=lang == "en" and source is None,
        course=course,
        parts=parts,
        model_problem=model,
        page_data=page_data,
        package_version=v.package_version,
        changes=v.changes,
    )


@dataclass(frozen=True)
class ReaderPage:
    """What the template gets for one logged-in reader: the sheet with their own state in it."""

    problem: ProblemDetail
    course: CourseLinks
    parts: list[PartStatus]
    page_data: dict[str, Any]


def for_reader(
    platform: Platform, db: Session, kept: ProblemSheet, user: User, standing: Standing
) -> ReaderPage:
    problem = kept.problem.model_copy(
        update={
            "best_score": standing.best_score,
            "solved": standing.solved,
            "status": standing.status,
            "changed_since": changes_after(
                kept.package_version, kept.changes, standing.best_version, standing.best_submission_id
            )
            if standing.solved
            else None,
            "kept_best": standing.kept_best,
        }
    )
    solved = standing.solved_problems

    def step(s: CourseStep) -> CourseStep:
        return s.model_copy(update={"solved": s.id in solved})

    course = CourseLinks(
        chapter=kept.course.chapter,
        prerequisites=[step(s) for s in kept.course.prerequisites],
        next=step(kept.course.next) if kept.course.next else None,
    )
    parts = kept.parts
    if parts:
        # Theirs by the worker's rule (an accepted Submit), which a score need not follow.
        package = platform.problems.get(problem.id)
        parts = part_statuses(db, user.id, package) if package is not None and package.part_problems else []
    data = {**kept.page_data, "loggedIn": True, "userId": user.id}
    return ReaderPage(problem, course, parts, data)
