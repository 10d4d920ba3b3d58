"""Issue 31 item 4: a waiting learner reads how many jobs are ahead, and a running submit says
when its public cases are done; the progress goes when the result comes."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from sqlalchemy.orm import Session, sessionmaker

from judge.core.grading import Progress
from tests.web.judging.test_queue import add_jobs, report
from web.db import make_engine, make_sessionmaker, transaction
from web.judging import queue
from web.judging.progress import ProgressWriter
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


class Steps:
    """A clock and timers that move only when the test says: time passes without waiting."""

    def __init__(self) -> None:
        self.now = 100.0
        self.timers: list[tuple[float, Callable[[], None]]] = []

    def clock(self) -> float:
        return self.now

    def schedule(self, delay_s: float, fn: Callable[[], None]) -> Callable[[], None]:
        entry = (self.now + delay_s, fn)
        self.timers.append(entry)
        return lambda: self.timers.remove(entry) if entry in self.timers else None

    def advance(self, seconds: float) -> None:
        self.now += seconds
        for entry in sorted(self.timers, key=lambda e: e[0]):
            if entry[0] <= self.now and entry in self.timers:
                self.timers.remove(entry)
                entry[1]()


def test_the_writer_is_quiet_at_first_then_paced_and_keeps_the_latest() -> None:
    written: list[Progress] = []
    steps = Steps()
    with ProgressWriter(written.append, 0.4, 0.25, steps.clock, steps.schedule) as writer:
        for n in range(1, 4):
            writer(Progress(n, 10, "public"))
            steps.advance(0.05)
        assert written == []  # a judgement over by now writes nothing
        steps.advance(0.3)
        assert written == [Progress(3, 10, "public")]  # the timer wrote the latest
        writer(Progress(4, 10, "hidden"))  # within 0.25 s of that write: the timer's
        writer(Progress(5, 10, "hidden"))  # the same timer takes the latest
        assert written[-1] == Progress(3, 10, "public")
        steps.advance(0.25)
        assert written == [Progress(3, 10, "public"), Progress(5, 10, "hidden")]
        steps.advance(1.0)
        writer(Progress(6, 10, "hidden"))  # long after the last write: at once
        assert written[-1] == Progress(6, 10, "hidden")
        writer(Progress(7, 10, "hidden"))  # pending when the judgement ends
    writer(Progress(8, 10, "hidden"))  # closed: the result is coming, nothing more is written
    steps.advance(1.0)
    assert written[-1] == Progress(6, 10, "hidden") and steps.timers == []


def test_the_real_timer_writes_the_latest_after_a_quiet_start() -> None:
    written: list[Progress] = []
    with ProgressWriter(written.append, quiet_s=0.05, every_s=0.05) as writer:
        writer(Progress(1, 2, "public"))
        deadline = time.monotonic() + 10
        while not written and time.monotonic() < deadline:
            time.sleep(0.01)
    assert written == [Progress(1, 2, "public")]
