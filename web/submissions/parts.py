"""The learner's own parts: for a problem that imports other problems' solutions (judge parts),
each part is the learner's latest accepted submission of that problem, or missing."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import ColumnElement, select
from sqlalchemy.orm import Session

from judge.authoring.package import Problem
from judge.core.runner.job import PartSource
from judge.core.verdicts import Verdict
from web.submissions.models import Mode, Submission


def learner_parts(db: Session, user_id: int, problem: Problem) -> list[PartSource]:
    """Every part `problem`'s solutions may import, as this learner's own accepted code."""
    parts = []
    for part in problem.part_problems:
        code = latest_accepted(db, user_id, part.id)
        origin = "learner" if code is not None else "missing"
        parts.append(PartSource(part.id, part.module_name, code, origin))
    return parts


def _accepted_submits(user_id: int) -> tuple[ColumnElement[bool], ...]:
    """The learner's fully accepted submissions: a Submit with AC (a Run is not one). The one
    rule the worker judges by and the pages show."""
    return (
        Submission.user_id == user_id,
        Submission.mode == Mode.SUBMIT,
        Submission.verdict == Verdict.AC.value,
    )


def latest_accepted(db: Session, user_id: int, problem_id: str) -> str | None:
    """The code of the learner's latest fully accepted submission of `problem_id`."""
    return db.scalar(
        select(Submission.code)
        .where(*_accepted_submits(user_id), Submission.problem_id == problem_id)
        .order_by(Submission.id.desc())
        .limit(1)
    )


@dataclass(frozen=True)
class PartStatus:
    """A part as a problem page shows it: which problem, which module, and whether it is theirs."""

    problem: str
    module: str
    title_zh: str
    title_en: str
    solved: bool


def part_statuses(db: Session, user_id: int | None, problem: Problem) -> list[PartStatus]:
    """The parts of `problem` and, for a signed-in learner, which of them they have solved."""
    solved: set[str] = set()
    ids = [p.id for p in problem.part_problems]
    if user_id is not None and ids:
        solved = set(
            db.scalars(
                select(Submission.problem_id)
                .where(*_accepted_submits(user_id), Submission.problem_id.in_(ids))
                .distinct()
            )
        )
    return [
        PartStatus(p.id, p.module_name, p.spec.title.zh, p.spec.title.en, p.id in solved)
        for p in problem.part_problems
    ]
