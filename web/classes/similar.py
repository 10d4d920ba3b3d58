"""Similar accepted submissions in a class, for its instructor: a list to look at, never a penalty.

The comparison itself is web.classes.similarity's (a pure function, its rules documented there);
this module picks what it compares: each member's latest accepted Submit of the chosen problem,
against the package's reference and accepted solutions as read from the served package (the
server has them on disk). The instructor sees their members' code side by side; the reference's
code is never in the answer, only the name of the given solution a code is closest to.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from pydantic import BaseModel
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from judge.authoring.package import Problem
from web.auth.models import User
from web.classes.access import managed_class
from web.classes.board import class_problems
from web.classes.gradebook import members
from web.classes.similarity import THRESHOLD, Near, similar_pairs
from web.errors import N_, ApiError
from web.submissions.models import Mode, Submission, SubmissionStatus

NOT_IN_CLASS = N_("Problem {id} is in none of this class's assignments.")


class Side(BaseModel):
    user_id: int
    username: str
    submission_id: int
    created_at: datetime
    code: str
    # The given solution (reference, accepted/<stem>) this code is closest to, and the share.
    closest: str | None
    closest_share: float | None


class SimilarPair(BaseModel):
    share: float  # of tokens in matching blocks, after normalising (0..1)
    a: Side
    b: Side


class SimilarOut(BaseModel):
    class_id: int
    class_name: str
    problem_id: str
    problems: list[str]  # the problems one may choose: those of the class's assignments
    threshold: float
    compared: int  # members with an accepted Submit of the problem
    pairs: list[SimilarPair]


@dataclass(frozen=True)
class _Accepted:
    submission_id: int
    created_at: datetime
    code: str


_COUNTED = func.coalesce(Submission.kept_score, Submission.score)
_COUNTED_MAX = func.coalesce(Submission.kept_max_score, Submission.max_score)


def _latest_accepted(db: Session, user_ids: list[int], problem_id: str) -> dict[int, _Accepted]:
    """Each learner's latest accepted Submit (full score, a rejudge's kept one counted)."""
    if not user_ids:
        return {}
    rows = db.execute(
        select(Submission.user_id, Submission.id, Submission.created_at, Submission.code)
        .where(
            Submission.user_id.in_(user_ids),
            Submission.problem_id == problem_id,
            Submission.mode == Mode.SUBMIT,
            Submission.status == SubmissionStatus.DONE,
            Submission.blocked_by.is_(None),
            _COUNTED_MAX > 0,
            _COUNTED >= _COUNTED_MAX,
        )
        .order_by(Submission.created_at.desc(), Submission.id.desc())
    )
    found: dict[int, _Accepted] = {}
    for user_id, sub_id, created_at, code in rows:
        found.setdefault(user_id, _Accepted(sub_id, created_at, code))
    return found


def given_solutions(problem: Problem | None) -> dict[str, str]:
    """What everyone who solved the problem may read: the reference and the accepted solutions."""
    if problem is None:
        return {}
    given = {"reference": problem.reference.source()}
    for solution in problem.solutions("accepted"):
        given[solution.name] = solution.source()
    return given


def similar(
    db: Session, user: User, class_id: int, problem_id: str | None, problems: Mapping[str, Problem]
) -> SimilarOut:
    """Pairs of members whose accepted code of `problem_id` (default: the class's first problem)
    is near-identical, most similar first."""
    group = managed_class(db, user, class_id)
    problem_id = problem_id or None  # an empty choice is no choice
    choices = class_problems(db, group.id)
    chosen = problem_id or (choices[0] if choices else "")
    if problem_id is not None and problem_id not in choices:
        raise ApiError(404, "not_found", NOT_IN_CLASS, params={"id": problem_id})
    learners = {u.id: u.username for u in members(db, group.id)}
    accepted = _latest_accepted(db, list(learners), chosen) if chosen else {}
    # In the members' order (by name), so that each pair reads in that order too.
    codes = {uid: accepted[uid].code for uid in learners if uid in accepted}
    pairs = similar_pairs(codes, given_solutions(problems.get(chosen)))

    def side(uid: int, near: Near | None) -> Side:
        a = accepted[uid]
        return Side(
            user_id=uid,
            username=learners[uid],
            submission_id=a.submission_id,
            created_at=a.created_at,
            code=a.code,
            closest=near.name if near else None,
            closest_share=round(near.share, 3) if near else None,
        )

    return SimilarOut(
        class_id=group.id,
        class_name=group.name,
        problem_id=chosen,
        problems=choices,
        threshold=THRESHOLD,
        compared=len(accepted),
        pairs=[
            SimilarPair(share=round(p.share, 3), a=side(p.a, p.near_a), b=side(p.b, p.near_b)) for p in pairs
        ],
    )
