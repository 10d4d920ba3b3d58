"""Workers: claim a submission, judge it with `judge/`, write the result; repeat.

`judge serve` runs a pool of these as threads beside the web app (judging waits on a
sandbox process or container, so threads are enough); `judge worker` runs a pool on its
own, on any host that reaches the database. A heartbeat thread keeps the lease alive while
a judgement runs; a worker that dies simply stops renewing it, and the job returns to the
queue when the lease runs out.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from judge.expected import ExpectedStore
from judge.grading import judge_source
from judge.package import Problem
from judge.report import Report
from sandbox.backend import Backend
from web.db import transaction
from web.metrics import Metrics
from web.problems.models import ProblemVersion
from web.submissions import queue
from web.submissions.models import Mode
from web.submissions.parts import learner_parts
from web.submissions.queue import Claim
from web.submissions.waiting import CompletionBoard

if TYPE_CHECKING:
    from web.settings import WebSettings

log = logging.getLogger(__name__)


@dataclass
class JudgeContext:
    """What judging needs, shared by every worker thread of a process."""

    problems: dict[str, Problem]
    backend: Backend
    store: ExpectedStore
    startup_s: float


@dataclass(frozen=True)
class QueueSettings:
    lease_s: float
    heartbeat_s: float
    poll_s: float
    max_attempts: int

    @classmethod
    def of(cls, settings: WebSettings) -> QueueSettings:
        return cls(settings.lease_s, settings.heartbeat_s, settings.poll_s, settings.max_attempts)


class Worker:
    def __init__(
        self,
        name: str,
        factory: sessionmaker[Session],
        context: JudgeContext,
        settings: QueueSettings,
        metrics: Metrics | None = None,
        wake: threading.Event | None = None,
        board: CompletionBoard | None = None,
    ) -> None:
        self.name = name
        self.factory = factory
        self.context = context
        self.settings = settings
        self.metrics = metrics
        self.wake = wake or threading.Event()
        self.board = board

    def run_forever(self, stop: threading.Event) -> None:
        while not stop.is_set():
            # Cleared before looking at the queue, not after waiting: a wake-up that comes
            # while this worker looks (or while another worker clears) is never lost.
            self.wake.clear()
            try:
                worked = self.run_once()
            except Exception:  # the database went away, say; keep the worker alive
                log.exception("worker %s: claiming failed", self.name)
                worked = False
            if not worked:
                self.wake.wait(self.settings.poll_s)

    def run_once(self) -> bool:
        """Judge one queued submission if there is one. True if one was taken."""
        s = self.settings
        claimed = queue.claim(self.factory, self.name, s.lease_s, s.max_attempts)
        if claimed is None:
            return False
        if self.board is not None:
            self.board.notify(claimed.submission_id)  # queued -> running
        beat_stop = threading.Event()
        beat = threading.Thread(target=self._heartbeat, args=(claimed, beat_stop), daemon=True)
        beat.start()
        started = time.monotonic()
        try:
            report, version_id = self._judge(claimed)
        except Exception as exc:
            log.exception("worker %s: judging submission %s failed", self.name, claimed.submission_id)
            beat_stop.set()
            queue.release(self.factory, claimed, self.name, f"{type(exc).__name__}: {exc}", s.max_attempts)
            return True
        finally:
            beat_stop.set()
            beat.join()
        try:
            written = queue.complete(self.factory, claimed, report, version_id, self.name)
        except Exception as exc:  # the database failed us: give the job back now, not at lease end
            log.exception("worker %s: writing submission %s failed", self.name, claimed.submission_id)
            queue.release(self.factory, claimed, self.name, f"{type(exc).__name__}: {exc}", s.max_attempts)
            return True
        if not written:
            log.warning(
                "worker %s: lease of submission %s was lost; result dropped", self.name, claimed.submission_id
            )
        else:
            if self.board is not None:
                self.board.notify(claimed.submission_id)  # long-polling readers see it now
            if self.metrics is not None:
                elapsed = time.monotonic() - started
                self.metrics.observe_judgement(claimed.mode, str(report["verdict"]), elapsed)
        return True

    def _heartbeat(self, claimed: Claim, stop: threading.Event) -> None:
        while not stop.wait(self.settings.heartbeat_s):
            try:
                if not queue.heartbeat(self.factory, claimed, self.settings.lease_s):
                    return
            except Exception:
                log.exception("worker %s: heartbeat failed", self.name)

    def _judge(self, claimed: Claim) -> tuple[dict[str, Any], int | None]:
        problem = self.context.problems.get(claimed.problem_id)
        if problem is None:
            message = f"题目 {claimed.problem_id} 已下线 problem {claimed.problem_id} is no longer offered"
            return Report.system_error(claimed.problem_id, message).to_dict(), None
        with transaction(self.factory) as session:
            version_id = session.scalar(
                select(ProblemVersion.id).where(
                    ProblemVersion.problem_id == problem.id,
                    ProblemVersion.content_hash == problem.content_hash,
                )
            )
            # The parts it may import are the learner's own accepted solutions, read when it is
            # judged (a rejudge takes the parts they have then).
            parts = learner_parts(session, claimed.user_id, problem)
        which: Literal["public", "all"] = "public" if claimed.mode == Mode.RUN else "all"
        c = self.context
        report = judge_source(problem, claimed.code, c.backend, c.store, which, c.startup_s, parts)
        return report.to_dict(), version_id


class WorkerPool:
    """N worker threads in this process; `wake()` after an enqueue skips the poll delay."""

    def __init__(
        self,
        n: int,
        factory: sessionmaker[Session],
        context: JudgeContext,
        settings: QueueSettings,
        metrics: Metrics | None = None,
        board: CompletionBoard | None = None,
    ) -> None:
        self._stop = threading.Event()
        self._wake = threading.Event()
        self.board = board if board is not None else CompletionBoard()
        host = f"{socket.gethostname()}:{os.getpid()}"
        self.workers = [
            Worker(f"{host}/{i}", factory, context, settings, metrics, self._wake, self.board)
            for i in range(n)
        ]
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
        self._wake.set()

    def stop(self, timeout: float = 30.0) -> None:
        self._stop.set()
        self._wake.set()
        for t in self._threads:
            t.join(timeout)
        if self.workers:
            self.workers[0].context.backend.close()  # its ready containers go too
