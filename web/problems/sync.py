"""Load the packages under problems/ into the database, one row per (id, content hash)."""

from __future__ import annotations

import logging
from pathlib import Path

from sqlalchemy import bindparam, select, update
from sqlalchemy.orm import Session, sessionmaker

from judge.authoring.package import PackageError, Problem, all_problem_dirs
from web.db import transaction
from web.notify import Notices, Topic
from web.problems.models import ProblemVersion

log = logging.getLogger(__name__)


def load_packages(problems_dir: Path) -> dict[str, Problem]:
    """Every sound package by id. A broken package is logged and left out, not fatal."""
    loaded: dict[str, Problem] = {}
    for path in all_problem_dirs(problems_dir):
        try:
            problem = Problem(path)
            problem.cases  # noqa: B018 - import cases.py now: a broken one is refused here
        except PackageError as exc:
            log.error("problem package %s is broken and was not loaded: %s", path.name, exc)
            continue
        loaded[problem.id] = problem
    return loaded


def _optional(problem: Problem, name: str) -> str:
    try:
        return problem.read(name)
    except (FileNotFoundError, PackageError):
        return ""


def replace_problems(problems: dict[str, Problem], new: dict[str, Problem]) -> None:
    """Make `problems` (shared by the pages and the worker threads) hold `new`, one key at a time:
    a worker that looks a problem up meanwhile finds its old or its new package, never nothing."""
    for problem_id, problem in new.items():
        problems[problem_id] = problem
    for problem_id in [p for p in problems if p not in new]:
        problems.pop(problem_id, None)


def sync_problems(
    factory: sessionmaker[Session], problems: dict[str, Problem], notices: Notices | None = None
) -> list[str]:
    """Record each package's current version; returns the ids whose version is new. With
    `notices`, every other process (of every host, on PostgreSQL) reloads its problems/ after the
    commit."""
    changed = []
    with transaction(factory) as session:
        if notices is not None:
            notices.publish(session, Topic.PROBLEMS, here=False)
        for problem_id, problem in sorted(problems.items()):
            digest = problem.content_hash
            row = session.scalar(
                select(ProblemVersion).where(
                    ProblemVersion.problem_id == problem_id, ProblemVersion.content_hash == digest
                )
            )
            if row is None:
                spec = problem.spec
                row = ProblemVersion(
                    problem_id=problem_id,
                    content_hash=digest,
                    slug=spec.slug,
                    title_zh=spec.title.zh,
                    title_en=spec.title.en,
                    difficulty=spec.difficulty,
                    chapter=problem.chapter.label,
                    tags=list(spec.tags),
                    max_score=problem.max_score,
                    public_cases=[c.name for c in problem.select_cases("public")],
                    limits=spec.limits.model_dump(),
                    statement_zh=problem.read("statement.zh.md"),
                    statement_en=_optional(problem, "statement.en.md"),
                    starter=problem.starter.source(),
                )
                session.add(row)
                session.flush()
                changed.append(problem_id)
            session.execute(
                update(ProblemVersion)
                .where(ProblemVersion.problem_id == problem_id, ProblemVersion.id != row.id)
                .values(current=False)
            )
            row.current = True
            # Also on a row made before migration 0010 whose package has not changed since.
            row.package_version = problem.spec.version
            row.changes = {n: note.model_dump() for n, note in problem.spec.changes.items()}
            _place_in_course(row, problem, problems)
        # Packages that were removed from the folder are no longer offered.
        session.execute(
            update(ProblemVersion)
            .where(ProblemVersion.problem_id.not_in(list(problems)))
            .values(current=False)
        )
    return changed


def _place_in_course(row: ProblemVersion, problem: Problem, problems: dict[str, Problem]) -> None:
    """The course's chapter and the prerequisites (in course order, offered ones only), refreshed
    on the current version: course.toml can rename or reorder chapters without changing the
    package."""
    chapter = problem.chapter
    offered = [problems[p] for p in problem.prerequisites if p in problems]
    row.chapter = chapter.label
    row.chapter_number = chapter.number
    row.chapter_zh = chapter.zh
    row.chapter_en = chapter.en
    row.chapter_position = chapter.position
    row.prerequisites = [p.id for p in sorted(offered, key=lambda p: (p.chapter.position, p.id))]


# Built once: every problem page, submission and draft asks for it.
_CURRENT_VERSION = select(ProblemVersion).where(
    ProblemVersion.problem_id == bindparam("problem_id"), ProblemVersion.current.is_(True)
)


def current_version(session: Session, problem_id: str) -> ProblemVersion | None:
    return session.scalar(_CURRENT_VERSION, {"problem_id": problem_id})
