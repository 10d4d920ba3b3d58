"""A reader's standing on a problem as the problem page reads it (web.problems.standing: two
plain selects) is what the API's `get_problem` says, for every state a reader can be in, on a
real database (SQLite, and PostgreSQL when JUDGE_TEST_POSTGRES_URL is set)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from tests.web.factories import make_client, make_settings, platform_of, register
from web.auth.models import User
from web.problems import service
from web.problems.service import changes_after
from web.problems.standing import Standing, current_version_id, standing
from web.scores.models import Score
from web.statements import Statements
from web.submissions.models import Mode, Submission, SubmissionStatus


@pytest.fixture(params=["sqlite", "postgresql"])
def db(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Session]:
    """A session on a database with the shipped problems synced, judging nothing."""
    url = None if request.param == "sqlite" else request.getfixturevalue("postgres_url")
    with make_client(make_settings(tmp_path, database_url=url, workers=0)) as client:
        register(client)
        with platform_of(client).factory() as session:
            yield session


def the_user(db: Session) -> User:
    user = db.scalar(select(User))
    assert user is not None
    return user


def submission(db: Session, user: User, problem_id: str, mode: Mode = Mode.SUBMIT, **values: object) -> int:
    sub = Submission(user_id=user.id, problem_id=problem_id, mode=mode, code="x = 1\n", **values)
    db.add(sub)
    db.flush()
    return sub.id


def read(db: Session, user: User, problem_id: str) -> Standing:
    mine = standing(db, user.id, problem_id)
    assert mine is not None
    return mine


def same_as_the_service(db: Session, user: User, problem_id: str) -> None:
    mine = standing(db, user.id, problem_id)
    detail = service.get_problem(db, Statements(), problem_id, user)
    assert mine is not None
    assert mine.version_id == current_version_id(db, problem_id)
    assert (mine.best_score, mine.solved, mine.status) == (detail.best_score, detail.solved, detail.status)
    assert mine.kept_best == detail.kept_best
    version = service.current_version(db, problem_id)
    assert version is not None and version.id == mine.version_id
    shown = (
        changes_after(version.package_version, version.changes, mine.best_version, mine.best_submission_id)
        if mine.solved
        else None
    )
    assert shown == detail.changed_since
    solved = set(db.scalars(select(Score.problem_id).where(Score.user_id == user.id, Score.solved.is_(True))))
    assert mine.solved_problems == solved


def test_every_state_of_a_reader_is_read_as_the_service_reads_it(db: Session) -> None:
    user = the_user(db)
    same_as_the_service(db, user, "204")
    assert read(db, user, "204").status == "new"

    # A scratch run is no attempt; a run is.
    submission(db, user, "204", Mode.SCRATCH)
    assert read(db, user, "204").status == "new"
    submission(db, user, "204", Mode.RUN)
    same_as_the_service(db, user, "204")
    assert read(db, user, "204").status == "attempted"

    # A score, not solved; then solved on an older package version, with a rejudge that judged
    # the best submission lower (the best it had is kept).
    db.add(Score(user_id=user.id, problem_id="204", best_score=40, max_score=100, solved=False))
    db.flush()
    same_as_the_service(db, user, "204")
    best = submission(
        db,
        user,
        "204",
        status=SubmissionStatus.DONE,
        verdict="WA",
        score=60,
        max_score=100,
        kept_verdict="AC",
        kept_score=100,
        kept_max_score=100,
    )
    score = db.get(Score, (user.id, "204"))
    assert score is not None
    score.best_score, score.solved, score.best_submission_id, score.best_version = 100, True, best, 0
    db.add(Score(user_id=user.id, problem_id="201", best_score=100, max_score=100, solved=True))
    db.flush()
    same_as_the_service(db, user, "204")
    mine = standing(db, user.id, "204")
    assert mine is not None and mine.status == "solved" and mine.kept_best is not None
    assert mine.solved_problems == {"201", "204"}
    # Another problem's best submission is not this one's kept best.
    same_as_the_service(db, user, "201")
    assert read(db, user, "201").kept_best is None


def test_an_unknown_problem_has_no_standing_and_no_version(db: Session) -> None:
    user = the_user(db)
    assert standing(db, user.id, "nope") is None
    assert current_version_id(db, "nope") is None
