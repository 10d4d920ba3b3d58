"""The local backend: a child process with rlimits in its own process group, killed as a group.

For a learner's own machine and for development. It is no security boundary: code that
runs here can read the user's files and reach the network. It limits time, CPU, memory,
file size and output so that honest mistakes (an endless loop, a huge tensor) end cleanly.

Limits are applied with prlimit(2) right after the child starts and before it is sent its
job; the runner reads the whole job before it loads any learner code, so no learner code
ever runs without them. (preexec_fn would do the same but is unsafe in threaded servers.)
"""

from __future__ import annotations

import contextlib
import math
import os
import resource
import selectors
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from judge.core.backend import Limits, Outcome, ResultWatch, RunnerSpec

# What the runner itself needs before learner code runs: the interpreter, torch and its
# libraries map about 0.6 GiB of address space. The learner's budget comes on top.
BASELINE_ADDRESS_SPACE = 1024 * 1024 * 1024


class LocalBackend:
    name = "local"
    is_sandbox = False

    def __init__(self, code_root: Path, runner: RunnerSpec, python: str | None = None) -> None:
        self.code_root = code_root
        # Every run is a new process: the runner's cold command, nothing preloaded.
        self.runner = runner
        self.python = python or sys.executable

    def runtime_id(self) -> str:
        import torch

        return f"local:python-{sys.version.split()[0]}:torch-{torch.__version__}"

    def warm_up(self) -> None:
        """Nothing is pooled here: each run is a new process."""

    def close(self) -> None:
        """Nothing is held between runs."""

    def run(self, stdin: bytes, limits: Limits, watch: ResultWatch | None = None) -> Outcome:
        with tempfile.TemporaryDirectory(prefix="judge-run-") as workdir:
            return self._run(self.runner.cold_argv(self.python), stdin, limits, workdir, watch)

    def _run(
        self, command: list[str], stdin: bytes, limits: Limits, workdir: str, watch: ResultWatch | None
    ) -> Outcome:
        start = time.monotonic()
        try:
            proc = subprocess.Popen(
                command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=workdir,
                env=runner_env(self.code_root, workdir),
                start_new_session=True,
                close_fds=True,
            )
        except OSError as exc:
            return Outcome.failed(f"cannot start the runner: {exc}")
        assert proc.stdin and proc.stdout and proc.stderr
        try:
            _apply_limits(proc.pid, limits)
        except OSError as exc:
            kill_group(proc.pid)
            proc.wait()
            return Outcome.failed(f"cannot limit the runner: {exc}")

        writer = threading.Thread(target=_feed, args=(proc.stdin, stdin), daemon=True)
        writer.start()
        try:
            return supervise(proc.pid, proc.stdout.fileno(), proc.stderr.fileno(), limits, start, watch)
        finally:
            proc.returncode = 0  # reaped by supervise; keep Popen from waiting again
            for f in (proc.stdout, proc.stderr):
                f.close()
            writer.join(timeout=1.0)


def runner_env(code_root: Path, workdir: str) -> dict[str, str]:
    """The whole environment a local run sees: a fixed list, nothing of the caller's."""
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": workdir,
        "TMPDIR": workdir,
        "LANG": "C.UTF-8",
        "PYTHONPATH": str(code_root),
        "PYTHONHASHSEED": "0",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONUNBUFFERED": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "MALLOC_ARENA_MAX": "2",
    }


def supervise(
    pid: int, result_fd: int, log_fd: int, limits: Limits, start: float, watch: ResultWatch | None
) -> Outcome:
    """Watch a started run to its end: read its result and log streams under their caps, start
    the wall clock at the first result byte, kill its process group when a clock runs out or a
    stream overflows, reap it and say how it ended. `pid` leads its own process group; `start`
    is when the run began (the start-up clock counts from it). The caller closes the fds."""
    result, log = bytearray(), bytearray()
    outcome_flags = {"timed_out": False, "result_overflow": False, "log_overflow": False}
    ready_s: float | None = None
    deadline = start + limits.startup_s
    sel = selectors.DefaultSelector()
    sel.register(result_fd, selectors.EVENT_READ, ("result", result, limits.result_bytes))
    sel.register(log_fd, selectors.EVENT_READ, ("log", log, limits.log_bytes))
    open_streams = 2
    while open_streams:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            outcome_flags["timed_out"] = True
            break
        for key, _ in sel.select(timeout=min(remaining, 0.5)):
            which, buf, cap = key.data
            chunk = os.read(key.fd, 65536)
            if not chunk:
                sel.unregister(key.fileobj)
                open_streams -= 1
                continue
            if which == "result" and ready_s is None:
                ready_s = time.monotonic() - start
                deadline = time.monotonic() + limits.wall_s
            buf.extend(chunk)
            if watch is not None and which == "result":
                watch(chunk)
            if len(buf) > cap:
                del buf[cap:]
                outcome_flags[f"{which}_overflow"] = True
        if outcome_flags["result_overflow"] or outcome_flags["log_overflow"]:
            break
    sel.close()
    if open_streams:  # stopped early: timeout or overflow
        kill_group(pid)
    # Wait for the runner itself, still within the wall clock.
    status, usage = _wait(pid, deadline)
    if status is None:
        outcome_flags["timed_out"] = True
        kill_group(pid)
        status, usage = _wait(pid, None)
    kill_group(pid)  # anything it left behind in its group
    wall = time.monotonic() - start
    assert status is not None and usage is not None
    exit_code = os.waitstatus_to_exitcode(status)
    sig = -exit_code if exit_code < 0 else None
    cpu = usage.ru_utime + usage.ru_stime
    peak = usage.ru_maxrss * 1024
    cpu_exceeded = sig == signal.SIGXCPU or (sig == signal.SIGKILL and cpu >= math.ceil(limits.cpu_s))
    memory_exceeded = (
        sig == signal.SIGKILL
        and not outcome_flags["timed_out"]
        and not cpu_exceeded
        and not (outcome_flags["result_overflow"] or outcome_flags["log_overflow"])
    )
    return Outcome.of_run(
        bytes(result),
        bytes(log),
        exit_code=None if sig else exit_code,
        signal=sig,
        wall_s=wall,
        ready_s=ready_s,
        clock_ran_out=outcome_flags["timed_out"],
        cpu_s=cpu,
        peak_memory_bytes=peak,
        cpu_exceeded=cpu_exceeded,
        memory_exceeded=memory_exceeded,
        result_overflow=outcome_flags["result_overflow"],
        log_overflow=outcome_flags["log_overflow"],
    )


def _apply_limits(pid: int, limits: Limits) -> None:
    for which, value in rlimits(limits, BASELINE_ADDRESS_SPACE + limits.memory_bytes):
        resource.prlimit(pid, which, value)


def rlimits(limits: Limits, address_space: int) -> list[tuple[int, tuple[int, int]]]:
    """A run's rlimits (CPU, address space, file size, no core dumps, processes): one list for
    the new process here and the forked child (judge.core.forked), which sets its own."""
    cpu = math.ceil(limits.cpu_s)
    return [
        (resource.RLIMIT_CPU, (cpu, cpu + 1)),
        (resource.RLIMIT_AS, (address_space, address_space)),
        (resource.RLIMIT_FSIZE, (limits.file_bytes, limits.file_bytes)),
        (resource.RLIMIT_CORE, (0, 0)),
        (resource.RLIMIT_NPROC, (limits.processes, limits.processes)),
    ]


def _feed(pipe: object, data: bytes) -> None:
    try:
        pipe.write(data)  # type: ignore[attr-defined]
        pipe.close()  # type: ignore[attr-defined]
    except (BrokenPipeError, OSError, ValueError):
        pass  # the runner died or stopped reading; its outcome says why


def kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def _wait(pid: int, deadline: float | None) -> tuple[int | None, resource.struct_rusage | None]:
    """waitpid with rusage, polling until `deadline` (None: block). (None, None) on timeout."""
    while True:
        flags = 0 if deadline is None else os.WNOHANG
        try:
            got, status, usage = os.wait4(pid, flags)
        except ChildProcessError:
            return 0, resource.getrusage(resource.RUSAGE_CHILDREN)
        if got == pid:
            return status, usage
        if deadline is not None and time.monotonic() >= deadline:
            return None, None
        time.sleep(0.01)
