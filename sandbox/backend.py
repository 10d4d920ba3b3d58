"""The sandbox interface: run one command with a stdin payload under limits, return what happened.

A backend knows processes and containers, not problems or users. The judge hands it the
runner's command, the job bytes and the limits; it hands back the result stream, the
captured log (the learner's prints and stderr), and how the process ended.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class Limits:
    # The run's clock starts when the first byte of the result stream arrives (the runner is
    # ready: interpreter and torch loaded, no learner code yet). Until then `startup_s` applies.
    startup_s: float = 30.0
    wall_s: float = 10.0  # wall-clock time from ready to the end of the run
    cpu_s: float = 10.0  # CPU time (user + system) for the whole run
    memory_bytes: int = 1024 * 1024 * 1024  # what the run may use beyond the runner's own baseline
    result_bytes: int = 64 * 1024 * 1024  # the result stream
    log_bytes: int = 64 * 1024  # stdout + stderr of the learner, kept for display
    file_bytes: int = 16 * 1024 * 1024  # largest file the run may write
    processes: int = 64


@dataclass
class Outcome:
    result: bytes  # the runner's frame stream, at most limits.result_bytes
    log: bytes  # the captured learner output, at most limits.log_bytes
    exit_code: int | None  # None when killed by a signal
    signal: int | None
    wall_s: float  # from the start of the run to its end, sandbox start-up included
    cpu_s: float = 0.0
    ready_s: float | None = None  # when the runner became ready (first result byte); None: never
    peak_memory_bytes: int = 0
    timed_out: bool = False  # the wall clock ran out and the run was killed
    startup_timed_out: bool = False  # the runner never became ready within startup_s
    cpu_exceeded: bool = False
    memory_exceeded: bool = False  # the run was stopped for memory (OOM kill or limit)
    result_overflow: bool = False  # the result stream went over its cap
    log_overflow: bool = False  # the learner's output went over its cap
    system_error: str | None = None  # the backend itself failed; not the learner's fault


class Backend(Protocol):
    name: str
    # False for backends that are no security boundary (the local one).
    is_sandbox: bool

    def runtime_id(self) -> str:
        """Identifies the runtime (interpreter, torch, image) for caching reference observations."""
        ...

    def run(self, command: list[str], stdin: bytes, limits: Limits) -> Outcome: ...

    def warm_up(self) -> None:
        """Start preparing sandboxes ahead of the first run (a no-op where nothing is pooled)."""
        ...

    def close(self) -> None:
        """Release what the backend holds between runs (a pool's ready containers)."""
        ...
