"""A cold run: one job in a fresh container of its own, created, fed, read and always removed.

The container's only channel is the attach stream: the job goes in on stdin, the runner's
frames come out on stdout and the learner's prints on stderr. Nothing is read back from a
file, so nothing the learner plants (a link, a FIFO) is ever opened by the judge. The
container holds no secrets: the job carries the code and the case table, never a reference
or an expected value. Output is read under the caps, and the container is killed when a
cap, the start-up deadline or the wall clock is passed.
"""

from __future__ import annotations

import signal
import threading
import time

from judge.core.backend import Limits, Outcome, ResultWatch
from sandbox.attach import AttachFrames, append_capped
from sandbox.engine import BASELINE_MEMORY, ENGINE_ERRORS, Attachment, Engine, EngineFailure


def run_cold(
    engine: Engine, command: list[str], stdin: bytes, limits: Limits, watch: ResultWatch | None = None
) -> Outcome:
    """One attempt; an engine failure raises (EngineFailure or one of ENGINE_ERRORS)."""
    start = time.monotonic()
    cid = engine.create(
        command,
        memory=BASELINE_MEMORY + limits.memory_bytes,
        processes=limits.processes,
        cpu_s=limits.cpu_s,
        file_bytes=limits.file_bytes,
        kind="run",
    )
    try:
        return _pump(engine, cid, engine.attach(cid), stdin, limits, start, watch)
    finally:
        engine.remove(cid)


def _pump(
    engine: Engine,
    cid: str,
    stream: Attachment,
    stdin: bytes,
    limits: Limits,
    start: float,
    watch: ResultWatch | None,
) -> Outcome:
    # Start and feed from a thread while this one reads: a container that floods its
    # output at once would otherwise stall the engine's start call on our unread socket.
    starter = _Starter(engine, cid, stream, stdin)
    starter.start()
    demux = _Demux(limits, watch)
    deadline = start + limits.startup_s
    clock_ran_out = False
    ready_s: float | None = None
    try:
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                clock_ran_out = True
                break
            chunk = stream.read(min(remaining, 0.1))
            if chunk is None:
                if starter.error is not None:
                    raise EngineFailure(f"the container did not start: {starter.error}")
                continue
            if not chunk:
                break  # the container's streams closed: it has exited
            was_ready = demux.ready
            demux.feed(chunk)
            if demux.ready and not was_ready:
                ready_s = time.monotonic() - start
                deadline = time.monotonic() + limits.wall_s
            if demux.result_overflow or demux.log_overflow:
                break
        if clock_ran_out or demux.result_overflow or demux.log_overflow:
            # Close our end first: the engine does not finish a kill while its copy of
            # the container's output is blocked on a socket nobody reads.
            stream.close()
            engine.kill(cid)
        state = engine.wait(cid, max(deadline - time.monotonic(), 0.0) + 5.0)
        if state is None:  # streams closed but the container lives on: over the wall clock
            clock_ran_out = True
            engine.kill(cid)
            state = engine.wait(cid, 30.0)
            if state is None:
                raise EngineFailure("the container did not stop after it was killed")
    finally:
        stream.close()
    starter.join(timeout=1.0)
    exit_code = int(state.get("ExitCode", -1))
    oom = bool(state.get("OOMKilled"))
    # With docker-init as pid 1, a runner killed by signal N exits as 128 + N.
    sig = exit_code - 128 if 128 < exit_code < 128 + 65 else None
    return Outcome.of_run(
        bytes(demux.result),
        bytes(demux.log),
        exit_code=None if sig else exit_code,
        signal=sig,
        wall_s=time.monotonic() - start,
        ready_s=ready_s,
        clock_ran_out=clock_ran_out,
        cpu_exceeded=sig == signal.SIGXCPU,
        memory_exceeded=oom and not clock_ran_out,
        result_overflow=demux.result_overflow,
        log_overflow=demux.log_overflow,
    )


class _Demux:
    """Splits Docker's multiplexed attach stream into result (stdout) and log (stderr), capped."""

    def __init__(self, limits: Limits, watch: ResultWatch | None = None) -> None:
        self.limits = limits
        self.watch = watch
        self.result = bytearray()
        self.log = bytearray()
        self.result_overflow = False
        self.log_overflow = False
        self.ready = False  # the first result byte arrived: the runner is up
        self._frames = AttachFrames()

    def feed(self, chunk: bytes) -> None:
        for stream, payload in self._frames.feed(chunk):
            if stream == 1:
                self.ready = self.ready or bool(payload)
                self.result_overflow |= append_capped(self.result, payload, self.limits.result_bytes)
                if self.watch is not None and payload:
                    self.watch(payload)
            else:
                self.log_overflow |= append_capped(self.log, payload, self.limits.log_bytes)


class _Starter(threading.Thread):
    """Starts the container, then writes the job to its stdin and half-closes it."""

    def __init__(self, engine: Engine, cid: str, stream: Attachment, data: bytes) -> None:
        super().__init__(daemon=True)
        self.engine, self.cid, self.stream, self.data = engine, cid, stream, data
        self.error: Exception | None = None

    def run(self) -> None:
        try:
            self.engine.start(self.cid)
        except ENGINE_ERRORS as exc:
            self.error = exc
            return
        try:
            self.stream.send_all(self.data)
            self.stream.end_input()
        except OSError:
            pass  # the runner died or stopped reading; its outcome says why
