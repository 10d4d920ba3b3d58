"""Workers: claim a submission, judge it with `judge/`, write the result; repeat.

`judge serve` runs a pool of these as threads beside the web app (judging waits on a
sandbox process or container, so threads are enough); `judge worker` runs a pool on its
own, on any host that reaches the database. A heartbeat thread keeps the lease alive while
a judgement runs; a worker that dies simply stops renewing it, and the job returns to the
queue when the lease runs out.

An idle worker sleeps until a notice says a job was queued (web.notify: from this process, or
from any host on PostgreSQL), or until `poll_s` has passed: polling finds what no notice
announces (a lease that ran out) and covers a database without notices.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from judge.authoring.package import Problem
from judge.core.runner.job import PartSource
from web.db import transaction
from web.judging import queue
from web.judging.judges import JUDGES, Job, JudgeContext, Judging, withdrawn
from web.judging.queue import Claim
from web.judging.records import StoredReport, StoredScratch
from web.metrics import Metrics
from web.notify import Notices, Topic
from web.problems.models import ProblemVersion
from web.submissions.parts import learner_parts

if TYPE_CHECKING:
    from web.settings import WebSettings

log = logging.getLogger(__name__)


class Doorbell:
    """Wakes one idle worker per ring, so that one queued job wakes one worker, not all.

    Woken workers that all race for the same row cost the winner several milliseconds (their
    claims run in Python, under the GIL, beside its own), and on SQLite they queue for the one
    write lock. A worker that has claimed a job rings again, so a second idle one looks
    for more: a burst still wakes as many workers as it has jobs, one after the other. Rings
    are counted (up to one per worker), so a ring that comes while nobody waits is kept.
    """

    def __init__(self, workers: int) -> None:
        self._cond = threading.Condition()
        self._rings = 0
        self._most = max(1, workers)

    def ring(self) -> None:
        with self._cond:
            self._rings = min(self._rings + 1, self._most)
            self._cond.notify()

    def ring_all(self) -> None:
        with self._cond:
            self._rings = self._most
            self._cond.notify_all()

    def wait(self, timeout_s: float) -> None:
        """Until a ring (one kept earlier counts) or `timeout_s`."""
        with self._cond:
            if self._rings == 0:
                self._cond.wait(timeout_s)
            if self._rings > 0:
                self._rings -= 1


@dataclass(frozen=True)
class QueueSettings:
    lease_s: float
    heartbeat_s: float
    poll_s: float
    max_attempts: int
    # The poll interval while notices reach this process from every host (PostgreSQL).
    notified_poll_s: float = 2.0
    # The scratch cell's reference answers per learner and problem, and their window.
    scratch_replays: int = 48
    scratch_replay_window_s: float = 6 * 3600.0
    aging_s: float = queue.AGING_S  # the fair claim's (web.judging.queue.claim_order)

    @classmethod
    def of(cls, settings: WebSettings) -> QueueSettings:
        return cls(
            settings.lease_s,
            settings.heartbeat_s,
            settings.poll_s,
            settings.max_attempts,
            max(settings.poll_s, settings.notified_poll_s),
            settings.scratch_replays_per_problem,
            settings.scratch_replay_window_s,
            aging_s=settings.queue_aging_s,
        )


class Worker:
    def __init__(
        self,
        name: str,
        factory: sessionmaker[Session],
        context: JudgeContext,
        settings: QueueSettings,
        metrics: Metrics | None = None,
        bell: Doorbell | None = None,
        notices: Notices | None = None,
    ) -> None:
        self.name = name
        self.factory = factory
        self.context = context
        self.settings = settings
        self.metrics = metrics
        self.bell = bell or Doorbell(1)
        self.notices = notices
        self.judging = Judging(
            context, factory, settings.scratch_replays, settings.scratch_replay_window_s, notices
        )
        self._versions = VersionIds()

    def run_forever(self, stop: threading.Event) -> None:
        while not stop.is_set():
            try:
                worked = self.run_once()
            except Exception:  # the database went away, say; keep the worker alive
                log.exception("worker %s: claiming failed", self.name)
                worked = False
            if not worked:
                # A ring that came while this worker looked is kept: it returns at once.
                self.bell.wait(self._poll_s())

    def _poll_s(self) -> float:
        shared = self.notices is not None and self.notices.shared
        return self.settings.notified_poll_s if shared else self.settings.poll_s

    def run_once(self) -> bool:
        """Judge one queued submission if there is one. True if one was taken."""
        s = self.settings
        claimed = queue.claim(self.factory, self.name, s.lease_s, s.max_attempts, self.notices, s.aging_s)
        if claimed is None:
            return False
        self.bell.ring()  # there may be more: the next idle worker looks
        beat_stop = threading.Event()
        beat = threading.Thread(target=self._heartbeat, args=(claimed, beat_stop), daemon=True)
        beat.start()
        started = time.monotonic()
        try:
            result, version_id = self._judge(claimed)
        except Exception as exc:
            log.exception("worker %s: judging submission %s failed", self.name, claimed.submission_id)
            beat_stop.set()
            self._release(claimed, exc)
            return True
        finally:
            beat_stop.set()
            beat.join()
        try:
            written = queue.complete(self.factory, claimed, result, version_id, self.name, self.notices)
        except Exception as exc:  # the database failed us: give the job back now, not at lease end
            log.exception("worker %s: writing submission %s failed", self.name, claimed.submission_id)
            self._release(claimed, exc)
            return True
        if not written:
            log.warning(
                "worker %s: lease of submission %s was lost; result dropped", self.name, claimed.submission_id
            )
        elif self.metrics is not None:
            elapsed = time.monotonic() - started
            self.metrics.observe_judgement(claimed.mode, result.verdict.value, elapsed)
        return True

    def _release(self, claimed: Claim, exc: Exception) -> None:
        why = f"{type(exc).__name__}: {exc}"
        queue.release(self.factory, claimed, self.name, why, self.settings.max_attempts, self.notices)

    def _heartbeat(self, claimed: Claim, stop: threading.Event) -> None:
        while not stop.wait(self.settings.heartbeat_s):
            try:
                if not queue.heartbeat(self.factory, claimed, self.settings.lease_s):
                    return
            except Exception:
                log.exception("worker %s: heartbeat failed", self.name)

    def _judge(self, claimed: Claim) -> tuple[StoredReport | StoredScratch, int | None]:
        """The job judged by its mode's judge, and the row id of the problem's version it was
        judged on (None if this process has none: a problem gone from problems/)."""
        problem = self.context.problems.get(claimed.problem_id)
        if problem is None:
            return withdrawn(claimed), None
        version_id, parts = self._read_first(claimed, problem)
        return JUDGES[claimed.mode](Job(claimed, problem, parts), self.judging), version_id

    def _read_first(self, claimed: Claim, problem: Problem) -> tuple[int | None, list[PartSource]]:
        """The version's row id (kept once read) and the learner's parts: one transaction, and
        none at all for a known version of a problem without parts."""
        version_id = self._versions.known(problem)
        if version_id is not None and not problem.part_problems:
            return version_id, []
        with transaction(self.factory) as session:
            return self._versions.read(session, problem), learner_parts(session, claimed.user_id, problem)


class VersionIds:
    """The problem versions' row ids, by problem and content hash: read once, not for every
    judgement (a version row is never changed nor deleted)."""

    def __init__(self) -> None:
        self._ids: dict[tuple[str, str], int] = {}

    def known(self, problem: Problem) -> int | None:
        return self._ids.get((problem.id, problem.content_hash))

    def read(self, session: Session, problem: Problem) -> int | None:
        found = self.known(problem)
        if found is None:
            found = session.scalar(
                select(ProblemVersion.id).where(
                    ProblemVersion.problem_id == problem.id,
                    ProblemVersion.content_hash == problem.content_hash,
                )
            )
            if found is not None:
                self._ids[(problem.id, problem.content_hash)] = found
        return found


class WorkerPool:
    """N worker threads in this process, woken by each QUEUED notice."""

    def __init__(
        self,
        n: int,
        factory: sessionmaker[Session],
        context: JudgeContext,
        settings: QueueSettings,
        metrics: Metrics | None = None,
        notices: Notices | None = None,
    ) -> None:
        self._stop = threading.Event()
        self._bell = Doorbell(n)
        host = f"{socket.gethostname()}:{os.getpid()}"
        self.workers = [
            Worker(f"{host}/{i}", factory, context, settings, metrics, self._bell, notices) for i in range(n)
        ]
        if notices is not None:
            notices.subscribe(Topic.QUEUED, lambda _payload: self.wake())
        self._threads: list[threading.Thread] = []

    def start(self) -> None:
        # Ready sandboxes (warm or fork mode) start now, not on the first submission.
        if self.workers:
            self.workers[0].context.backend.warm_up()
        for w in self.workers:
            t = threading.Thread(target=w.run_forever, args=(self._stop,), name=w.name, daemon=True)
            t.start()
            self._threads.append(t)

    def wake(self) -> None:
        self._bell.ring()

    def stop(self, timeout: float = 30.0) -> None:
        self._stop.set()
        self._bell.ring_all()
        for t in self._threads:
            t.join(timeout)
        if self.workers:
            self.workers[0].context.backend.close()  # its ready containers go too
