"""The gradebook of one assignment: learner × problem, computed from the judged submissions.

Recomputed on every read, never stored: a rejudge, an extension or a changed late policy shows
at once, and nothing can drift from the submissions table. A submission counts with what it
scored (or what a rejudge kept, as for the learner's own best: web.scores.service); a submission
stopped by a part its author had not solved is no attempt. Work made before the assignment
opened counts: the problems are the course's, and a learner who solved one in practice has
solved it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from web.auth.models import User
from web.classes.deadlines import due_for, in_time
from web.classes.models import Assignment, AssignmentProblem, Extension, Group, Membership
from web.submissions.models import Mode, Submission, SubmissionStatus


@dataclass(frozen=True)
class Cell:
    """One learner on one problem of the assignment."""

    problem_id: str
    max_score: int
    attempts: int  # judged submits, in time or not
    best_in_time: int | None  # best score of the submits made by the learner's due time
    best_overall: int | None  # best score of all their submits
    first_accepted_at: datetime | None  # when the first full-score submit was made
    late: bool  # their best came after the due time (it beats what they had in time)
    grade: int  # what counts: best_in_time, or best_overall when the assignment counts late work


@dataclass(frozen=True)
class Row:
    user_id: int
    username: str
    due_at: datetime  # the assignment's due time, or the learner's extension
    extended: bool
    cells: tuple[Cell, ...]

    @property
    def total(self) -> int:
        return sum(cell.grade for cell in self.cells)

    @property
    def solved(self) -> int:
        return sum(1 for cell in self.cells if cell.grade == cell.max_score and cell.max_score > 0)


@dataclass(frozen=True)
class Gradebook:
    class_id: int
    assignment_id: int
    title: str
    opens_at: datetime
    due_at: datetime
    late_counts: bool
    problems: tuple[str, ...]
    max_scores: tuple[int, ...]
    rows: tuple[Row, ...]

    @property
    def max_total(self) -> int:
        return sum(self.max_scores)


def problems_of(db: Session, assignment_id: int) -> list[str]:
    return list(
        db.scalars(
            select(AssignmentProblem.problem_id)
            .where(AssignmentProblem.assignment_id == assignment_id)
            .order_by(AssignmentProblem.position, AssignmentProblem.problem_id)
        )
    )


def members(db: Session, class_id: int) -> list[User]:
    """The class's learners, by username (case-insensitively, as people sort names)."""
    return list(
        db.scalars(
            select(User)
            .join(Membership, Membership.user_id == User.id)
            .where(Membership.class_id == class_id)
            .order_by(func.lower(User.username))
        )
    )


def extensions_of(db: Session, assignment_id: int) -> dict[int, datetime]:
    rows = db.execute(
        select(Extension.user_id, Extension.due_at).where(Extension.assignment_id == assignment_id)
    )
    return {user_id: due_at for user_id, due_at in rows}


@dataclass(frozen=True)
class _Judged:
    user_id: int
    problem_id: str
    created_at: datetime
    score: int
    max_score: int


def _judged(db: Session, user_ids: Sequence[int], problems: Sequence[str]) -> list[_Judged]:
    if not user_ids or not problems:
        return []
    rows = db.execute(
        select(
            Submission.user_id,
            Submission.problem_id,
            Submission.created_at,
            func.coalesce(Submission.kept_score, Submission.score),
            func.coalesce(Submission.kept_max_score, Submission.max_score),
        ).where(
            Submission.user_id.in_(user_ids),
            Submission.problem_id.in_(problems),
            Submission.mode == Mode.SUBMIT,
            Submission.status == SubmissionStatus.DONE,
            Submission.blocked_by.is_(None),
        )
    )
    return [_Judged(u, p, at, score or 0, top or 0) for u, p, at, score, top in rows]


def _cell(
    problem_id: str, max_score: int, judged: Sequence[_Judged], due_at: datetime, late_counts: bool
) -> Cell:
    in_time_scores = [j.score for j in judged if in_time(j.created_at, due_at)]
    best_in_time = max(in_time_scores, default=None)
    best_overall = max((j.score for j in judged), default=None)
    full = max_score if max_score > 0 else max((j.max_score for j in judged), default=0)
    accepted = sorted(j.created_at for j in judged if full > 0 and j.score >= full)
    late = best_overall is not None and (best_in_time is None or best_overall > best_in_time)
    grade = (best_overall if late_counts else best_in_time) or 0
    return Cell(
        problem_id=problem_id,
        max_score=full,
        attempts=len(judged),
        best_in_time=best_in_time,
        best_overall=best_overall,
        first_accepted_at=accepted[0] if accepted else None,
        late=late,
        grade=grade,
    )


def gradebook(db: Session, group: Group, assignment: Assignment, max_scores: Mapping[str, int]) -> Gradebook:
    """Every member of `group` on every problem of `assignment`. `max_scores` is each offered
    problem's full score (a problem no longer offered takes the best max its submissions had)."""
    problems = problems_of(db, assignment.id)
    learners = members(db, group.id)
    extensions = extensions_of(db, assignment.id)
    by_key: dict[tuple[int, str], list[_Judged]] = {}
    for judged in _judged(db, [u.id for u in learners], problems):
        by_key.setdefault((judged.user_id, judged.problem_id), []).append(judged)
    rows = []
    for learner in learners:
        due_at = due_for(assignment, extensions, learner.id)
        cells = tuple(
            _cell(p, max_scores.get(p, 0), by_key.get((learner.id, p), []), due_at, assignment.late_counts)
            for p in problems
        )
        rows.append(Row(learner.id, learner.username, due_at, learner.id in extensions, cells))
    tops = tuple(
        max([max_scores.get(p, 0), *(c.max_score for r in rows for c in r.cells if c.problem_id == p)])
        for p in problems
    )
    return Gradebook(
        class_id=group.id,
        assignment_id=assignment.id,
        title=assignment.title,
        opens_at=assignment.opens_at,
        due_at=assignment.due_at,
        late_counts=assignment.late_counts,
        problems=tuple(problems),
        max_scores=tops,
        rows=tuple(rows),
    )
