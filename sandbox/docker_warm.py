"""Warm and fork-server containers: started ahead of a job, reached over their attach stream.

A container of either kind runs `python3 -m sandbox.forkserver` (see that module), which
preloads the runner (torch imported and warmed up) and then waits on stdin:

- warm: the server runs as the sandbox user and serves one job, then exits; the container
  is removed. Every job still gets a container no job used before; only the start-up
  moved off the job's path.
- fork: the server runs as root in the container, with no capabilities but the three it
  needs to hand each job a user of its own (SETUID, SETGID, CHOWN), and serves up to N
  jobs, each in a fresh child (its own uid, rlimits, seccomp filter and folder). The
  container is removed after N jobs or after anything unusual.

The host trusts nothing it reads here beyond the envelope framing: result bytes go to the
judge's parser with the same caps as a cold run, and its own clock (start-up + wall +
a grace) backs up the server's. When that runs out, or the stream breaks, the container
is killed and removed, and the outcome says why.
"""

from __future__ import annotations

import json
import secrets
import time
from dataclasses import dataclass
from typing import Any, Literal

from judge.core.backend import Limits, Outcome, ResultWatch, RunnerSpec
from sandbox import wire
from sandbox.attach import AttachFrames, append_capped
from sandbox.engine import BASELINE_MEMORY, PYTHON, Engine, EngineFailure

Mode = Literal["cold", "warm", "fork"]
# Beyond the job's own start-up and wall clocks: the server's kill, wait and report.
GRACE_S = 3.0
SERVER_LOG_BYTES = 16 * 1024
# The server, its kill helper and torch's threads, on top of the job's processes.
SERVER_PROCESSES = 16
FORK_CAPABILITIES = ["SETUID", "SETGID", "CHOWN"]


FIRST_JOB_UID = 1_000_000  # far above any uid the image or the host hands out
MAX_UID = 2**32 - 2  # (uid_t)-1 means "no change" to setresuid


@dataclass(frozen=True)
class PoolPolicy:
    mode: Mode = "fork"
    size: int = 2  # ready containers kept per backend
    recycle_after: int = 100  # jobs a fork server serves before it is replaced
    memory_bytes: int = 1024 * 1024 * 1024  # the most a pooled job may ask for (beyond the baseline)
    processes: int = 64  # the most processes a pooled job may ask for
    startup_s: float = 60.0  # for a container to become ready
    # Per-job uids are allotted to each fork-mode container in blocks of this size, at a random
    # block: one size for every container on the host (the settings' largest recycle_after), so
    # that blocks never overlap, and no job shares a uid (or its host-wide process count).
    uid_block: int = 4000

    def __post_init__(self) -> None:
        if self.recycle_after > self.uid_block:
            raise ValueError(
                f"recycle_after={self.recycle_after} needs more per-job uids than a block "
                f"holds ({self.uid_block})"
            )

    def uid_base(self) -> int:
        """The first per-job uid of a new container: a random whole block below the largest uid."""
        blocks = (MAX_UID - FIRST_JOB_UID) // self.uid_block
        return FIRST_JOB_UID + secrets.randbelow(blocks) * self.uid_block

    def accepts(self, limits: Limits) -> bool:
        return limits.memory_bytes <= self.memory_bytes and limits.processes <= self.processes


class WarmContainer:
    """One started container with a ready server, used by one job at a time."""

    def __init__(self, engine: Engine, runner: RunnerSpec, policy: PoolPolicy) -> None:
        if runner.preload is None or runner.entry is None:
            raise ValueError(f"the runner {runner.cold_args} has no preload and entry: it can only run cold")
        self.engine = engine
        self.policy = policy
        self.jobs = policy.recycle_after if policy.mode == "fork" else 1
        self.served = 0
        self.server_log = bytearray()
        self._frames = AttachFrames()
        self._envelopes = wire.EnvelopeReader()
        fork = policy.mode == "fork"
        # Per-job uids unique to this container (the per-uid process count is host-wide).
        uid_base = policy.uid_base()
        command = [
            PYTHON,
            "-m",
            "sandbox.forkserver",
            "--preload",
            runner.preload,
            "--entry",
            runner.entry,
            "--jobs",
            str(self.jobs),
            "--uid-base",
            str(uid_base),
        ]
        if runner.warm is not None:
            command += ["--warm", runner.warm]
        self.cid = engine.create(
            command,
            memory=BASELINE_MEMORY + policy.memory_bytes,
            processes=policy.processes + SERVER_PROCESSES,
            cpu_s=None,
            file_bytes=None,
            kind=policy.mode,
            user="0:0" if fork else None,
            # Fork mode: /tmp belongs to root and only the jobs' own folders are writable
            # (the server sets the mode again itself: Docker copies the image's onto a tmpfs).
            tmp_mode="0711" if fork else "1777",
            cap_add=FORK_CAPABILITIES if fork else None,
        )
        try:
            self._stream = engine.attach(self.cid)
        except BaseException:
            engine.remove(self.cid)
            raise
        try:
            engine.start(self.cid)
            ready = self._read_until(wire.READY, time.monotonic() + policy.startup_s)
        except BaseException:
            self.close()
            raise
        if ready is None:
            tail = self.server_log.decode("utf-8", "replace")[-2000:]
            self.close()
            raise EngineFailure(f"the {policy.mode} sandbox did not become ready: {tail}")
        hello = json.loads(ready)
        if fork and not hello.get("privileged"):
            self.close()
            raise EngineFailure(
                "the fork server is not root in its container: it cannot give jobs their own user"
            )

    # -- one job ---------------------------------------------------------------------------

    def run(self, stdin: bytes, limits: Limits, watch: ResultWatch | None = None) -> tuple[Outcome, bool]:
        """Run one job. Returns its outcome and whether this container may serve another."""
        self.served += 1
        header = {
            "startup_s": limits.startup_s,
            "wall_s": limits.wall_s,
            "cpu_s": limits.cpu_s,
            "memory_bytes": limits.memory_bytes,
            "result_bytes": limits.result_bytes,
            "log_bytes": limits.log_bytes,
            "file_bytes": limits.file_bytes,
            "processes": limits.processes,
            "open_files": self.engine.policy.open_files,
        }
        start = time.monotonic()
        result, log = bytearray(), bytearray()
        ready_s: float | None = None
        result_overflow = log_overflow = False
        try:
            self._stream.send_all(wire.encode_request(header, stdin))
        except OSError as exc:
            return self._broken(f"cannot send the job to the sandbox: {exc}", start), False
        backstop = start + limits.startup_s + limits.wall_s + GRACE_S
        end: dict[str, Any] | None = None
        try:
            while end is None:
                envelopes = self._next_envelopes(backstop)
                if envelopes is None:  # the backstop ran out or the stream ended
                    break
                for tag, payload in envelopes:
                    if tag == wire.RESULT:
                        if ready_s is None and payload:
                            ready_s = time.monotonic() - start
                        result_overflow |= append_capped(result, payload, limits.result_bytes)
                        if watch is not None:
                            watch(payload)
                    elif tag == wire.LOG:
                        log_overflow |= append_capped(log, payload, limits.log_bytes)
                    elif tag == wire.END:
                        end = json.loads(payload)
                    else:
                        raise wire.WireError(f"unexpected {tag!r} envelope during a job")
        except (wire.WireError, ValueError) as exc:
            return self._broken(f"the sandbox's stream is broken: {exc}", start), False
        if end is None:
            return self._lost(result, log, ready_s, start, limits), False
        if end.get("error"):  # the server could not run the job: the sandbox's fault, not the job's
            return self._broken(str(end["error"])[:500], start), False
        if end.get("setup_failed"):
            tail = log.decode("utf-8", "replace")[-1500:]
            return self._broken(f"the sandbox could not set up the job: {tail}", start), False
        outcome = Outcome.of_run(
            bytes(result),
            bytes(log),
            exit_code=end.get("exit_code"),
            signal=end.get("signal"),
            wall_s=time.monotonic() - start,
            ready_s=ready_s,
            clock_ran_out=bool(end.get("timed_out")),
            cpu_s=float(end.get("cpu_s") or 0.0),
            peak_memory_bytes=int(end.get("peak_memory_bytes") or 0),
            cpu_exceeded=bool(end.get("cpu_exceeded")),
            memory_exceeded=bool(end.get("memory_exceeded")),
            result_overflow=result_overflow or bool(end.get("result_overflow")),
            log_overflow=log_overflow or bool(end.get("log_overflow")),
        )
        fit = bool(end.get("fit")) and not (result_overflow or log_overflow)
        return outcome, fit

    def _lost(
        self, result: bytearray, log: bytearray, ready_s: float | None, start: float, limits: Limits
    ) -> Outcome:
        """No end report: our backstop ran out, or the container died (its OOM kill, say)."""
        timed_out = time.monotonic() >= start + limits.startup_s + limits.wall_s + GRACE_S
        self.kill()
        state = self.engine.last_state(self.cid)
        oom = bool(state.get("OOMKilled"))
        if not timed_out and not oom:
            tail = self.server_log.decode("utf-8", "replace")[-1500:]
            return self._broken(f"the sandbox ended without a report: {state} {tail}", start)
        return Outcome.of_run(
            bytes(result),
            bytes(log),
            exit_code=None,
            signal=9,
            wall_s=time.monotonic() - start,
            ready_s=ready_s,
            clock_ran_out=timed_out,
            memory_exceeded=oom and not timed_out,
        )

    def _broken(self, message: str, start: float) -> Outcome:
        self.kill()
        return Outcome.failed(message, time.monotonic() - start)

    # -- the attach stream -----------------------------------------------------------------

    def _next_envelopes(self, deadline: float) -> list[tuple[bytes, bytes]] | None:
        """The envelopes in the next chunk of stdout; None at the deadline or end of stream."""
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            try:
                chunk = self._stream.read(min(remaining, 1.0))
            except OSError:  # a stream that fails is a stream that ended
                chunk = b""
            if chunk is None:
                continue
            if not chunk:
                return None
            stdout = self._demux(chunk)
            if stdout:
                return self._envelopes.feed(stdout)

    def _demux(self, chunk: bytes) -> bytes:
        """Docker's attach framing: stdout bytes out, the server's stderr kept (capped)."""
        stdout = bytearray()
        for stream, payload in self._frames.feed(chunk):
            if stream == 1:
                stdout.extend(payload)
            else:
                append_capped(self.server_log, payload, SERVER_LOG_BYTES)
        return bytes(stdout)

    def _read_until(self, tag: bytes, deadline: float) -> bytes | None:
        while True:
            envelopes = self._next_envelopes(deadline)
            if envelopes is None:
                return None
            for got, payload in envelopes:
                if got == tag:
                    return payload

    # -- ending --------------------------------------------------------------------------------

    def kill(self) -> None:
        # The stream first: the engine does not finish a kill while its copy of the output
        # is blocked on a socket nobody reads.
        self._stream.close()
        self.engine.kill(self.cid)

    def close(self) -> None:
        self._stream.close()
        self.engine.remove(self.cid)
