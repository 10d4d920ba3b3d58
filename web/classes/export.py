"""The gradebook as its reader gets it: JSON for programs, CSV for spreadsheets.

Only the class's instructor (or an admin) reads it: the rows name every learner of the class.
The numbers are web.classes.gradebook's, recomputed on every read; this module only shapes them.
The CSV is UTF-8 with a BOM (without it, spreadsheets read Chinese names as mojibake), its header
in the reader's language, its times ISO 8601 in UTC (a spreadsheet has no reader's time zone).
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable, Mapping
from datetime import datetime
from urllib.parse import quote

from pydantic import BaseModel
from sqlalchemy import select
from sqlalchemy.orm import Session

from judge.authoring.package import Problem
from web.auth.models import User
from web.classes.access import managed_class
from web.classes.gradebook import Gradebook, gradebook
from web.classes.models import Assignment, Group
from web.errors import N_, ApiError

Gettext = Callable[[str], str]
NO_ASSIGNMENT = N_("There is no assignment {id}.")


class GradeCell(BaseModel):
    """A gradebook.Cell as the API gives it (read from its attributes)."""

    problem_id: str
    max_score: int
    best_in_time: int | None  # best score made by the learner's due time; null: no attempt in time
    best_overall: int | None
    first_accepted_at: datetime | None  # when the first full-score Submit was made (UTC)
    attempts: int
    late: bool  # the best overall came after the due time
    grade: int  # what counts: best_in_time, or best_overall when the assignment counts late work


class GradeRow(BaseModel):
    user_id: int
    username: str
    due_at: datetime  # the learner's due time: the assignment's or their extension
    extended: bool
    cells: list[GradeCell]
    total: int
    solved: int


class ProblemColumn(BaseModel):
    problem_id: str
    max_score: int


class GradebookOut(BaseModel):
    class_id: int
    class_name: str
    assignment_id: int
    title: str
    opens_at: datetime
    due_at: datetime
    late_counts: bool
    problems: list[ProblemColumn]
    max_total: int
    rows: list[GradeRow]


def max_scores(problems: Mapping[str, Problem]) -> dict[str, int]:
    """Each offered problem's full score (problem.toml's points)."""
    return {pid: problem.max_score for pid, problem in problems.items()}


def assignment_of(db: Session, group: Group, assignment_id: int) -> Assignment:
    """The class's assignment, else 404 (another class's is not found either)."""
    assignment = db.get(Assignment, assignment_id)
    if assignment is None or assignment.class_id != group.id:
        raise ApiError(404, "not_found", NO_ASSIGNMENT, params={"id": assignment_id})
    return assignment


def read_gradebook(
    db: Session, user: User, class_id: int, assignment_id: int, problems: Mapping[str, Problem]
) -> tuple[Group, Gradebook]:
    group = managed_class(db, user, class_id)
    assignment = assignment_of(db, group, assignment_id)
    return group, gradebook(db, group, assignment, max_scores(problems))


def class_gradebooks(
    db: Session, user: User, class_id: int, problems: Mapping[str, Problem]
) -> tuple[Group, list[Gradebook]]:
    """Every assignment's gradebook of the class, by due time."""
    group = managed_class(db, user, class_id)
    assignments = db.scalars(
        select(Assignment).where(Assignment.class_id == group.id).order_by(Assignment.due_at, Assignment.id)
    )
    tops = max_scores(problems)
    return group, [gradebook(db, group, a, tops) for a in assignments]


def as_json(group: Group, book: Gradebook) -> GradebookOut:
    return GradebookOut(
        class_id=group.id,
        class_name=group.name,
        assignment_id=book.assignment_id,
        title=book.title,
        opens_at=book.opens_at,
        due_at=book.due_at,
        late_counts=book.late_counts,
        problems=[
            ProblemColumn(problem_id=p, max_score=m)
            for p, m in zip(book.problems, book.max_scores, strict=True)
        ],
        max_total=book.max_total,
        rows=[
            GradeRow(
                user_id=r.user_id,
                username=r.username,
                due_at=r.due_at,
                extended=r.extended,
                cells=[GradeCell.model_validate(c, from_attributes=True) for c in r.cells],
                total=r.total,
                solved=r.solved,
            )
            for r in book.rows
        ],
    )


def _iso(value: datetime | None) -> str:
    """ISO 8601 in UTC with its offset (a stored time is UTC already)."""
    return value.isoformat() if value is not None else ""


def _number(value: int | None) -> str:
    return "" if value is None else str(value)


def _yes(value: bool, _: Gettext) -> str:
    return _("yes") if value else _("no")


def _write(rows: list[list[str]]) -> str:
    out = io.StringIO()
    csv.writer(out).writerows(rows)
    # The BOM tells a spreadsheet the file is UTF-8.
    return "\ufeff" + out.getvalue()


def gradebook_csv(book: Gradebook, _: Gettext) -> str:
    """One row per learner; per problem: best by the due time, best overall, first AC, attempts,
    late, grade; then the total and the count solved."""
    header = [_("Username"), _("Due (for this learner)"), _("Extended")]
    for p in book.problems:
        header += [
            _("{problem}: best by the due time").format(problem=p),
            _("{problem}: best overall").format(problem=p),
            _("{problem}: first accepted (UTC)").format(problem=p),
            _("{problem}: attempts").format(problem=p),
            _("{problem}: late").format(problem=p),
            _("{problem}: grade").format(problem=p),
        ]
    header += [_("Total"), _("Solved")]
    rows = [header]
    for r in book.rows:
        row = [r.username, _iso(r.due_at), _yes(r.extended, _)]
        for c in r.cells:
            row += [
                _number(c.best_in_time),
                _number(c.best_overall),
                _iso(c.first_accepted_at),
                str(c.attempts),
                _yes(c.late, _),
                str(c.grade),
            ]
        row += [str(r.total), str(r.solved)]
        rows.append(row)
    return _write(rows)


def class_csv(books: list[Gradebook], _: Gettext) -> str:
    """The whole class: one row per learner, each assignment's total grade and count solved,
    then the sum over assignments."""
    header = [_("Username")]
    for b in books:
        header += [
            _("{assignment}: grade (of {top})").format(assignment=b.title, top=b.max_total),
            _("{assignment}: solved").format(assignment=b.title),
        ]
    header.append(_("Total"))
    by_user: dict[int, list[str]] = {}
    totals: dict[int, int] = {}
    names: dict[int, str] = {}
    for i, b in enumerate(books):
        for r in b.rows:
            names[r.user_id] = r.username
            cells = by_user.setdefault(r.user_id, [""] * (2 * len(books)))
            cells[2 * i : 2 * i + 2] = [str(r.total), str(r.solved)]
            totals[r.user_id] = totals.get(r.user_id, 0) + r.total
    # Members are the same in every book (the class's); their order is the gradebook's.
    order = [r.user_id for r in books[0].rows] if books else []
    rows = [header] + [[names[u], *by_user[u], str(totals[u])] for u in order]
    return _write(rows)


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def content_disposition(stem: str, title: str) -> str:
    """An attachment's header: an ASCII name any browser takes (ids only, no quoting trouble),
    and the title in UTF-8 for those that read RFC 5987's filename*."""
    ascii_name = _UNSAFE.sub("-", stem).strip("-") or "gradebook"
    readable = quote(f"{title}.csv", safe="")
    return f"attachment; filename=\"{ascii_name}.csv\"; filename*=UTF-8''{readable}"
