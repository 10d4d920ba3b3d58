"""A class's own leaderboard: its members on the problems of its assignments.

Read by the class's members and its instructor. A member is listed as on the public board
(web.scores.service.leaderboard): under the display name they chose, or not at all when they
chose to stay off boards; a row never carries the username a display name stands for. Unlike the
public board, a listed member with nothing solved yet is listed too (the class is a roster).

Totals come from the scores table (each learner's best over their judged Submits, a rejudge's
kept score included), so the board agrees with the learner's own problem list.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from pydantic import BaseModel
from sqlalchemy import select
from sqlalchemy.orm import Session

from web.auth.models import User
from web.classes.access import visible_class
from web.classes.models import Assignment, AssignmentProblem, Membership
from web.scores.models import Score
from web.scores.service import LeaderboardRow


class ClassBoard(BaseModel):
    class_id: int
    class_name: str
    problems: list[str]  # the problems of the class's assignments, each once
    rows: list[LeaderboardRow]
    hidden: int  # members who chose to stay off leaderboards (not listed)


@dataclass(frozen=True)
class _Standing:
    user_id: int
    name: str
    score: int
    solved: int
    last: datetime | None

    def order(self) -> tuple[int, int, bool, datetime, str]:
        # Higher total, then more solved, then who got there first; nobody's time last.
        return (-self.score, -self.solved, self.last is None, self.last or datetime.min, self.name.lower())


def class_problems(db: Session, class_id: int) -> list[str]:
    """Each problem of the class's assignments once, in assignment (due time) order."""
    rows = db.execute(
        select(AssignmentProblem.problem_id)
        .join(Assignment, Assignment.id == AssignmentProblem.assignment_id)
        .where(Assignment.class_id == class_id)
        .order_by(Assignment.due_at, Assignment.id, AssignmentProblem.position)
    ).scalars()
    return list(dict.fromkeys(rows))


def class_board(db: Session, reader: User, class_id: int) -> ClassBoard:
    group = visible_class(db, reader, class_id)
    problems = class_problems(db, group.id)
    people = db.execute(
        select(User.id, User.username, User.display_name, User.on_leaderboard)
        .join(Membership, Membership.user_id == User.id)
        .where(Membership.class_id == group.id)
    ).all()
    listed = {uid: display or username for uid, username, display, on in people if on}
    best: dict[int, list[Score]] = {uid: [] for uid in listed}
    if listed and problems:
        for score in db.scalars(
            select(Score).where(Score.user_id.in_(list(listed)), Score.problem_id.in_(problems))
        ):
            best[score.user_id].append(score)
    standings = sorted(
        (
            _Standing(
                user_id=uid,
                name=listed[uid],
                score=sum(s.best_score for s in scores),
                solved=sum(1 for s in scores if s.solved),
                last=max((s.improved_at for s in scores if s.improved_at), default=None),
            )
            for uid, scores in best.items()
        ),
        key=_Standing.order,
    )
    rows: list[LeaderboardRow] = []
    for i, s in enumerate(standings):
        prev = rows[-1] if rows else None
        key = (s.score, s.solved, s.last)
        same = prev is not None and (prev.score, prev.solved, prev.last_improved_at) == key
        rows.append(
            LeaderboardRow(
                rank=prev.rank if same and prev is not None else i + 1,
                name=s.name,
                you=s.user_id == reader.id,
                score=s.score,
                solved=s.solved,
                last_improved_at=s.last,
            )
        )
    return ClassBoard(
        class_id=group.id,
        class_name=group.name,
        problems=problems,
        rows=rows,
        hidden=len(people) - len(listed),
    )
