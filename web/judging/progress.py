"""A running judgement's progress, written for its waiting readers at a pace the database bears.

Cases report one by one (judge.core.grading.Progress); a write per case would cost a quick
judgement more than its cases do. So: nothing is written while a judgement is younger than
`quiet_s` (most are over by then and their result is what the reader sees next), then at most
one write every `every_s`; the latest count is never lost, a timer writes it when no case
follows soon (a slow case). After `close()` nothing more is written: the result is coming.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from types import TracebackType

from judge.core.grading import Progress

QUIET_S = 0.4
EVERY_S = 0.25

Cancel = Callable[[], None]
# Run a function after a delay (seconds), on another thread; gives what cancels it.
Schedule = Callable[[float, Callable[[], None]], Cancel]


def timer(delay_s: float, fn: Callable[[], None]) -> Cancel:
    """The real Schedule: a daemon threading.Timer."""
    t = threading.Timer(delay_s, fn)
    t.daemon = True
    t.start()
    return t.cancel


class ProgressWriter:
    """`clock` and `schedule` are the time it reads and the timers it sets (a test passes its
    own, to step through time without waiting on it)."""

    def __init__(
        self,
        write: Callable[[Progress], None],
        quiet_s: float = QUIET_S,
        every_s: float = EVERY_S,
        clock: Callable[[], float] = time.monotonic,
        schedule: Schedule = timer,
    ) -> None:
        self._write = write
        self._quiet_s, self._every_s = quiet_s, every_s
        self._clock, self._schedule = clock, schedule
        self._started = clock()
        self._last = float("-inf")
        self._latest: Progress | None = None
        self._timer: Cancel | None = None
        self._closed = False
        # Held while writing: close() waits for a write under way, so none lands after it.
        self._lock = threading.Lock()

    def __call__(self, progress: Progress) -> None:
        with self._lock:
            if self._closed:
                return
            self._latest = progress
            if self._timer is not None:  # a write is already due: it takes the latest
                return
            due = max(self._started + self._quiet_s, self._last + self._every_s)
            wait = due - self._clock()
            if wait <= 0:
                self._flush()
                return
            self._timer = self._schedule(wait, self._fire)

    def _fire(self) -> None:
        with self._lock:
            self._timer = None
            if not self._closed:
                self._flush()

    def _flush(self) -> None:
        latest, self._latest = self._latest, None
        if latest is None:
            return
        self._last = self._clock()
        self._write(latest)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            if self._timer is not None:
                self._timer()
                self._timer = None

    def __enter__(self) -> ProgressWriter:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
