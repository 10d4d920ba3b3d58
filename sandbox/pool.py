"""A pool of ready sandboxes: started ahead of time, handed out one job at a time, replaced.

The pool knows nothing of containers: it holds `Session`s made by a factory and keeps
`size` of them ready, starting replacements in one background thread (one at a time, so
start-up never takes more than one core from the jobs running now). A session that is
unfit after its job (used up, or anything unusual) is closed in the background.
"""

from __future__ import annotations

import collections
import contextlib
import threading
import time
from collections.abc import Callable
from typing import Generic, Protocol, TypeVar

from sandbox.errors import SandboxError


class Session(Protocol):
    def close(self) -> None: ...


S = TypeVar("S", bound=Session)


class PoolClosed(SandboxError):
    pass


class Pool(Generic[S]):
    def __init__(
        self, factory: Callable[[], S], size: int, reusable: bool, name: str = "sandbox-pool"
    ) -> None:
        self.factory = factory
        # A reusable session (a fork server) comes back after its job; a single-use one (a
        # warm container) does not, so its replacement starts as soon as it is handed out.
        self.reusable = reusable
        self.size = max(size, 1)
        self.name = name
        self._ready: collections.deque[S] = collections.deque()
        self._busy = 0
        self._closed = False
        self._cond = threading.Condition()
        self.last_error: Exception | None = None
        self.failures = 0  # consecutive failed starts; 0 again after a success
        self.started = 0  # sessions started, for tests and the metrics
        self._filler: threading.Thread | None = None
        self._reaper = _Reaper()

    # -- handing out -------------------------------------------------------------------------

    def acquire(self, timeout_s: float) -> S | None:
        """A ready session, waiting up to `timeout_s` for one. None if none came in time, or at
        once when the last attempt to start one failed (the caller can do without the pool)."""
        give_up = time.monotonic() + timeout_s
        with self._cond:
            self._ensure_filler()
            while not self._ready:
                if self._closed:
                    raise PoolClosed(self.name)
                remaining = give_up - time.monotonic()
                if remaining <= 0 or self.failures:
                    return None
                self._cond.wait(remaining)
            self._busy += 1
            # Most recently used first: its memory is warm.
            session = self._ready.pop()
            self._cond.notify_all()  # a single-use session is gone: the filler replaces it
            return session

    def release(self, session: S, fit: bool) -> None:
        with self._cond:
            self._busy -= 1
            if fit and not self._closed:
                self._ready.append(session)
                # All: the filler waits on the same condition, and a single wake-up taken by it
                # left a job waiting for this session until its time-out (60 s).
                self._cond.notify_all()
                return
            self._cond.notify_all()  # the filler starts a replacement
        self._reaper.close(session)

    def start(self) -> None:
        """Begin starting sessions in the background (acquire does it too, on first use)."""
        with self._cond:
            self._ensure_filler()

    def fill(self, timeout_s: float) -> bool:
        """Wait until `size` sessions are ready (for benchmarks and tests). True if they are."""
        give_up = time.monotonic() + timeout_s
        with self._cond:
            self._ensure_filler()
            while len(self._ready) < self.size:
                remaining = give_up - time.monotonic()
                if remaining <= 0 or self._closed:
                    return False
                self._cond.wait(remaining)
            return True

    def ready_sessions(self) -> list[S]:
        with self._cond:
            return list(self._ready)

    def settle(self, timeout_s: float = 30.0) -> None:
        """Wait until the used sessions handed back have been closed (for callers that count
        what is left: closing runs on a background thread)."""
        self._reaper.drain(timeout_s)

    def close(self) -> None:
        with self._cond:
            self._closed = True
            sessions = list(self._ready)
            self._ready.clear()
            self._cond.notify_all()
        for session in sessions:
            with contextlib.suppress(Exception):
                session.close()
        if self._filler is not None:
            self._filler.join(timeout=60)
        self._reaper.drain()

    # -- keeping it full -----------------------------------------------------------------------

    def _ensure_filler(self) -> None:
        if self._filler is None and not self._closed:
            self._filler = threading.Thread(target=self._fill_forever, name=self.name, daemon=True)
            self._filler.start()

    def _wanted(self) -> bool:
        coming_back = self._busy if self.reusable else 0
        return not self._closed and len(self._ready) + coming_back < self.size

    def _fill_forever(self) -> None:
        while True:
            with self._cond:
                while not self._wanted():
                    if self._closed:
                        return
                    self._cond.wait(1.0)
            try:
                session = self.factory()
            except Exception as exc:
                with self._cond:
                    self.failures += 1
                    self.last_error = exc
                    self._cond.notify_all()  # waiters stop waiting for it
                time.sleep(min(0.5 * 2**self.failures, 30.0))  # the engine is in trouble: back off
                continue
            with self._cond:
                self.failures = 0
                self.started += 1
                if self._closed:
                    self._reaper.close(session)
                    return
                self._ready.append(session)
                self._cond.notify_all()


class _Reaper:
    """Closes used sessions on a thread of its own, off the path of the job that used them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []

    def close(self, session: Session) -> None:
        def run() -> None:
            with contextlib.suppress(Exception):
                session.close()

        thread = threading.Thread(target=run, name="sandbox-reaper", daemon=True)
        with self._lock:
            self._threads = [t for t in self._threads if t.is_alive()]
            self._threads.append(thread)
        thread.start()

    def drain(self, timeout_s: float = 30.0) -> None:
        with self._lock:
            threads = list(self._threads)
        for thread in threads:
            thread.join(timeout=timeout_s)
