"""Where a reader stands on one problem, as its page shows it, in two small queries: the
problem's current version (the page keeps what it derives from a version, web.pages.sheets, and
this id says which one to use) with whether the reader tried it, and the reader's scores over the
course with, for this problem, the best submission's kept result. Plain selects of the columns
shown: no ORM rows, so the statement, the code and the report stay in the database.

The rules are the services' own (`progress`, `changes_after`, `kept_best`'s), applied to these
columns; tests/web/test_problem_standing.py holds them equal to the services' answers."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import and_, bindparam, exists, select
from sqlalchemy.orm import Session

from web.problems.models import ProblemVersion
from web.problems.service import KeptBest, Progress
from web.scores.models import Score
from web.submissions.models import Mode, Submission, SubmissionStatus

_CURRENT = (ProblemVersion.problem_id == bindparam("problem_id"), ProblemVersion.current.is_(True))
_VERSION = select(ProblemVersion.id).where(*_CURRENT)
# The version with whether the reader tried the problem (`attempted_problem`'s rule).
_VERSION_AND_TRIED = select(
    ProblemVersion.id,
    exists()
    .where(
        Submission.user_id == bindparam("user_id"),
        Submission.problem_id == ProblemVersion.problem_id,
        Submission.mode != Mode.SCRATCH,
        Submission.blocked_by.is_(None),
    )
    .label("tried"),
).where(*_CURRENT)
# Every score of the reader's; for this problem's, the best submission's result and kept result.
_SCORES = (
    select(
        Score.problem_id,
        Score.solved,
        Score.best_score,
        Score.best_version,
        Score.best_submission_id,
        Submission.id,
        Submission.status,
        Submission.verdict,
        Submission.score,
        Submission.max_score,
        Submission.kept_score,
        Submission.kept_verdict,
    )
    .outerjoin(
        Submission,
        and_(Submission.id == Score.best_submission_id, Score.problem_id == bindparam("problem_id")),
    )
    .where(Score.user_id == bindparam("user_id"))
)


def current_version_id(db: Session, problem_id: str) -> int | None:
    """The id of the problem's current version; None for a problem not offered."""
    found: int | None = db.scalar(_VERSION, {"problem_id": problem_id})
    return found


@dataclass(frozen=True)
class Standing:
    """A logged-in reader's state on one problem and the course around it."""

    version_id: int  # the problem's current version
    best_score: int | None  # None before a first scored submit
    solved: bool
    status: Progress
    best_version: int | None  # the package version their accepted best was judged on
    best_submission_id: int | None
    kept_best: KeptBest | None
    solved_problems: frozenset[str]  # every problem of theirs with a full score


def standing(db: Session, user_id: int, problem_id: str) -> Standing | None:
    """None for a problem not offered."""
    found = db.execute(_VERSION_AND_TRIED, {"problem_id": problem_id, "user_id": user_id}).first()
    if found is None:
        return None
    version_id, tried = int(found[0]), bool(found[1])
    solved: set[str] = set()
    mine = None
    for row in db.execute(_SCORES, {"problem_id": problem_id, "user_id": user_id}):
        if row[1]:
            solved.add(row[0])
        if row[0] == problem_id:
            mine = row
    if mine is None:
        status: Progress = "attempted" if tried else "new"
        return Standing(version_id, None, False, status, None, None, None, frozenset(solved))
    (
        _,
        is_solved,
        best,
        best_version,
        best_id,
        sub_id,
        sub_status,
        verdict,
        score,
        max_score,
        kept,
        kept_verdict,
    ) = tuple(mine)
    kept_best = None
    # `kept_best`'s rule: a done submission whose rejudge judged it lower than the result it keeps.
    if (
        sub_id is not None
        and sub_status == SubmissionStatus.DONE
        and kept is not None
        and kept_verdict is not None
    ):
        kept_best = KeptBest(
            submission_id=sub_id,
            kept_verdict=kept_verdict,
            kept_score=kept,
            verdict=verdict,
            score=score,
            max_score=max_score,
        )
    return Standing(
        version_id,
        best,
        bool(is_solved),
        "solved" if is_solved else "attempted",
        best_version,
        best_id,
        kept_best,
        frozenset(solved),
    )
