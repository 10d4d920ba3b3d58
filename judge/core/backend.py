"""The sandbox interface: run one job of a declared runner under limits, return what happened.

A backend knows processes and containers, not problems or users. It is built with a
`RunnerSpec` (what it runs for every job); the judge hands it the job bytes and the limits,
and it hands back the result stream, the captured log (the learner's prints and stderr),
and how the process ended. How the runner is started (a new interpreter, or a preloaded
fork server's child) is the backend's own choice.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

# Told each piece of a job's result stream as it arrives, before the job ends (a judgement's
# progress is read from it). It must not raise, and it sees bytes not yet checked: what it
# learns is for display, never for the verdict.
ResultWatch = Callable[[bytes], None]


@dataclass(frozen=True)
class RunnerSpec:
    """What a backend runs for each job: one declaration for the cold and the pooled paths.

    Cold, a job is a new interpreter started with `cold_args` (after the backend's own
    Python, which differs between a container and the host), the job on its stdin. A backend
    that keeps processes ready calls `preload` ("module:function") once per process and
    `entry` ("module:function") once per job, in a child with the job on its stdin; together
    they must do what the cold command does. Without them the runner can only run cold.
    `warm` ("module:function", optional) is called in each job's child before its job
    exists: trusted, job-independent work that would otherwise be paid during the job. It may
    return an iterator of steps, which is stopped as soon as the job has come.
    """

    cold_args: tuple[str, ...]  # e.g. ("-m", "judge.core.runner")
    preload: str | None = None
    entry: str | None = None
    warm: str | None = None

    def __post_init__(self) -> None:
        if (self.preload is None) != (self.entry is None):
            raise ValueError("a runner that can be preloaded names both its preload and its entry")

    @property
    def poolable(self) -> bool:
        return self.entry is not None

    def cold_argv(self, python: str) -> list[str]:
        return [python, *self.cold_args]


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

    @classmethod
    def of_run(
        cls,
        result: bytes,
        log: bytes,
        *,
        exit_code: int | None,
        signal: int | None,
        wall_s: float,
        ready_s: float | None,
        clock_ran_out: bool,
        cpu_s: float = 0.0,
        peak_memory_bytes: int = 0,
        cpu_exceeded: bool = False,
        memory_exceeded: bool = False,
        result_overflow: bool = False,
        log_overflow: bool = False,
    ) -> Outcome:
        """A run that ended. A clock that ran out before the runner was ready is the start-up's
        (the sandbox's trouble, SE); after it, the run's wall clock (the learner's, TLE)."""
        return cls(
            result,
            log,
            exit_code,
            signal,
            wall_s,
            cpu_s=cpu_s,
            ready_s=ready_s,
            peak_memory_bytes=peak_memory_bytes,
            timed_out=clock_ran_out and ready_s is not None,
            startup_timed_out=clock_ran_out and ready_s is None,
            cpu_exceeded=cpu_exceeded,
            memory_exceeded=memory_exceeded,
            result_overflow=result_overflow,
            log_overflow=log_overflow,
        )

    @classmethod
    def failed(cls, message: str, wall_s: float = 0.0) -> Outcome:
        """The backend could not run the job (no learner code is to blame)."""
        return cls(b"", b"", None, None, wall_s, system_error=message)


class Backend(Protocol):
    name: str
    # False for backends that are no security boundary (the local one).
    is_sandbox: bool

    def runtime_id(self) -> str:
        """Identifies the runtime (interpreter, torch, image) for caching reference observations."""
        ...

    def run(self, stdin: bytes, limits: Limits, watch: ResultWatch | None = None) -> Outcome:
        """Run the runner the backend was built with (its RunnerSpec) once, `stdin` its job.
        `watch`, when given, is told the result stream's bytes as they come."""
        ...

    def warm_up(self) -> None:
        """Start preparing sandboxes ahead of the first run (a no-op where nothing is pooled)."""
        ...

    def close(self) -> None:
        """Release what the backend holds between runs (a pool's ready containers)."""
        ...
