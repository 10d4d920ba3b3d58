"""Long-polling for a verdict: a reader waits until its submission is done, not a poll interval.

Each change a worker writes (claimed, then judged) is a SUBMISSION notice (web.notify); the
platform hands it to `CompletionBoard.notify` (from a worker thread, or from the listener
thread for a worker on another host), and a waiting request (on the event loop) wakes at once.
Where notices do not reach this process from other hosts (SQLite; PostgreSQL while the
listening connection is down) a waiter also looks at the database again every `RECHECK_S`,
which bounds how late a verdict written elsewhere is seen; while they do, only every
`NOTIFIED_RECHECK_S`.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Protocol, TypeVar

from starlette.concurrency import run_in_threadpool

RECHECK_S = 0.5
NOTIFIED_RECHECK_S = 5.0
MAX_WAIT_S = 25.0  # below common proxy timeouts (30 s and up)


class CompletionBoard:
    def __init__(self, notified: Callable[[], bool] = lambda: False) -> None:
        """`notified()`: do notices from every host reach this process now?"""
        self._notified = notified
        self._lock = threading.Lock()
        self._waiters: dict[int, list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]]] = {}

    def notify(self, submission_id: int) -> None:
        """`submission_id` changed (it was claimed or judged). Safe to call from any thread."""
        with self._lock:
            waiters = self._waiters.pop(submission_id, [])
        for loop, future in waiters:
            with contextlib.suppress(RuntimeError):  # that loop has closed: nobody waits
                loop.call_soon_threadsafe(_resolve, future)

    def notify_all(self) -> None:
        """Anything may have changed (notices were lost): every waiter reads again."""
        with self._lock:
            ids = list(self._waiters)
        for submission_id in ids:
            self.notify(submission_id)

    def waiting(self) -> int:
        with self._lock:
            return sum(len(w) for w in self._waiters.values())

    async def wait_until(
        self, submission_id: int, is_done: Callable[[], Awaitable[bool]], timeout_s: float
    ) -> bool:
        """Wait until `is_done()` (a database read: has it changed?) says so, or `timeout_s` passes.

        The waiter is registered before each read, so a result committed between the read
        and the wait still wakes it. Returns the last answer of `is_done`.
        """
        loop = asyncio.get_running_loop()
        give_up = time.monotonic() + min(max(timeout_s, 0.0), MAX_WAIT_S)
        while True:
            future: asyncio.Future[None] = loop.create_future()
            with self._lock:
                self._waiters.setdefault(submission_id, []).append((loop, future))
            try:
                if await is_done():
                    return True
                remaining = give_up - time.monotonic()
                if remaining <= 0:
                    return False
                recheck_s = NOTIFIED_RECHECK_S if self._notified() else RECHECK_S
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(future, timeout=min(remaining, recheck_s))
            finally:
                self._forget(submission_id, future)

    def _forget(self, submission_id: int, future: asyncio.Future[None]) -> None:
        with self._lock:
            waiters = self._waiters.get(submission_id)
            if not waiters:
                return
            waiters[:] = [(lp, f) for lp, f in waiters if f is not future]
            if not waiters:
                del self._waiters[submission_id]


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


class HasStatus(Protocol):
    @property
    def status(self) -> str: ...


S = TypeVar("S", bound=HasStatus)


def _status(view: HasStatus) -> object:
    return view.status


async def changed_view(
    board: CompletionBoard,
    submission_id: int,
    first: S,
    read_now: Callable[[], S],
    wait_s: float,
    state: Callable[[S], object] = _status,
) -> S:
    """The first read (in a thread, `read_now`) whose `state` (its status unless given: a
    submission's progress and place in the queue too) is not `first`'s, or the last read when
    `wait_s` has passed: each read is the whole answer, so the one that sees the change is the
    one sent back (a submission's, or a scratch run's)."""
    latest = first

    async def changed() -> bool:
        nonlocal latest
        latest = await run_in_threadpool(read_now)
        return state(latest) != state(first)

    await board.wait_until(submission_id, changed, wait_s)
    return latest
