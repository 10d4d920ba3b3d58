"""Issue 31 item 4: a waiting learner reads how many jobs are ahead, and a running submit says
when its public cases are done; the progress goes when the result comes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy.orm import Session, sessionmaker

from tests.web.judging.test_queue import add_jobs, report
from web.db import make_engine, make_sessionmaker, transaction
from web.judging import queue
from web.migrate import upgrade
from web.submissions.models import Submission
from web.submissions.views import detail


@pytest.fixture
def factory(tmp_path: Path) -> Iterator[sessionmaker[Session]]:
    engine = make_engine(f"sqlite:///{tmp_path / 'progress.db'}")
    upgrade(engine)
    yield make_sessionmaker(engine)
    engine.dispose()


def test_jobs_ahead_count_the_queued_ones_before(factory: sessionmaker[Session]) -> None:
    _, ids = add_jobs(factory, 3)
    with factory() as s:
        assert [queue.queued_ahead(s, i) for i in ids] == [0, 1, 2]
    claimed = queue.claim(factory, "w", 60, 3)
    assert claimed is not None and claimed.submission_id == ids[0]
    with factory() as s:
        assert queue.queued_ahead(s, ids[2]) == 1  # the running one is no longer ahead


def test_progress_is_shown_while_running_and_cleared_when_done(factory: sessionmaker[Session]) -> None:
    _, ids = add_jobs(factory, 1)
    claimed = queue.claim(factory, "w", 60, 3)
    assert claimed is not None
    assert queue.record_progress(factory, claimed, {"done": 6, "total": 20, "stage": "hidden"})
    with factory() as s:
        sub = s.get(Submission, ids[0])
        assert sub is not None
        assert detail(sub, "u", None, False).progress == {"done": 6, "total": 20, "stage": "hidden"}
    assert queue.complete(factory, claimed, report(10), None, "w")
    with factory() as s:
        sub = s.get(Submission, ids[0])
        assert sub is not None and sub.progress is None
        assert detail(sub, "u", None, False).progress is None


def test_a_lost_lease_writes_no_progress(factory: sessionmaker[Session]) -> None:
    add_jobs(factory, 1)
    claimed = queue.claim(factory, "w", 60, 3)
    assert claimed is not None
    with transaction(factory) as s:
        sub = s.get(Submission, claimed.submission_id)
        assert sub is not None
        sub.lease_token = "someone-else"
    assert not queue.record_progress(factory, claimed, {"done": 1, "total": 2, "stage": "hidden"})
