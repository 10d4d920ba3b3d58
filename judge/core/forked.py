"""The local backend without a new interpreter: the runner in a child forked from this process.

A new runner process imports torch again (a second or more), which the practice kit's
`judge.py` has already paid for. Here each job runs in a child forked from the calling
process, the way the Docker fork server runs its jobs (sandbox/forkserver.py), and the
promises of the local backend (judge.core.local) are kept:

- the child leads a session and process group of its own, which is killed as a group when
  the run ends: a crash, `sys.exit`, `os._exit`, a segfault, an endless loop or a huge
  allocation of learner code ends the child, never the caller;
- before any job code runs, the child sets the run's rlimits itself (CPU, address space
  above what it already maps, file size, no core dumps, processes), enters a fresh working
  folder, and sees the local backend's environment, `sys.path` and `sys.argv`;
- the caller reads the result and log streams, clocks and caps with the local backend's own
  `supervise`, so the outcome, and the verdict made of it, are the local backend's.

The runner is the backend's `RunnerSpec`: `preload` (judge.core.runner.main:prepare: the
autograd warm-up and the guards' index, half a second) then `entry` (main) in the child.
`warm_up()` forks the first child ahead of its job and has it preload itself, so that this
runs beside the caller's own work (reading the expected outputs, the judge's imports);
later jobs preload this process once and fork prepared children.

When forking is not safe the job runs in a new process (judge.core.local.LocalBackend):

- not Linux: Windows has no fork; on macOS, system frameworks (Accelerate, which torch uses,
  and the Objective-C runtime) are not safe to use in a forked child without exec (CPython's
  multiprocessing stopped forking there for this reason), so macOS runs cold too;
- a process with more than one thread: a lock another thread holds at the fork stays held in
  the child forever (a notebook's kernel has several threads; so does a judge thread pool);
- a runner without a preload and an entry (`RunnerSpec.poolable` false);
- JUDGE_LOCAL_FORK=0 in the environment.

Differences a learner could observe from a new process, none of which a verdict depends on:
the child holds the caller's imported modules (the judge's own, torch's) and its string-hash
seed (PYTHONHASHSEED is fixed only for a new interpreter).
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import importlib.util
import io
import json
import os
import resource
import shutil
import signal
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judge.core.backend import Limits, Outcome, ResultWatch, RunnerSpec
from judge.core.children import run_and_leave, wait_for_limits
from judge.core.local import LocalBackend, kill_group, rlimits, runner_env, supervise

FORK_ENV = "JUDGE_LOCAL_FORK"  # "0": every job in a new process
# What the child may map beyond what it maps when its job comes, on top of the job's own
# budget: a new runner has about 0.64 GiB mapped after its preparation against the local
# backend's 1 GiB baseline, so this gives learner code the same room in both.
ADDRESS_SLACK = 384 * 1024 * 1024
EXIT_CHILD_SETUP = 71  # the child failed before the runner started (as the fork server's)
GO_FD = 3  # in a waiting child: the pipe its job's limits come on


def fork_available() -> bool:
    """Whether this platform forks safely with torch loaded (Linux only; see the module)."""
    return sys.platform.startswith("linux") and hasattr(os, "fork") and hasattr(os, "memfd_create")


def thread_count() -> int:
    """Threads of this process as the kernel counts them (torch's and numpy's pools included)."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return 0  # unknown: not safe


def forking_allowed() -> bool:
    return fork_available() and os.environ.get(FORK_ENV, "1").strip() != "0"


def local_backend(code_root: Path, runner: RunnerSpec, fork: bool = True) -> ForkedBackend | LocalBackend:
    """The local backend for `runner`: forked where that is allowed and `fork` asks for it,
    else a new process per job."""
    if fork and runner.poolable and forking_allowed():
        return ForkedBackend(code_root, runner)
    return LocalBackend(code_root, runner)


@dataclass
class _Child:
    """A forked child waiting for its job, as the caller holds it."""

    pid: int
    workdir: str
    stdin_fd: int  # the caller's handle on the memfd that is the child's stdin
    go_w: int  # the job's limits go here; closed unsent, it tells the child to leave
    result_r: int
    log_r: int


class ForkedBackend:
    name = "local"  # the same backend to the report and the expected store: no sandbox
    is_sandbox = False

    def __init__(self, code_root: Path, runner: RunnerSpec) -> None:
        if runner.preload is None or runner.entry is None:
            raise ValueError("a forked runner needs its preload and its entry")
        self.code_root = code_root
        self.runner = runner
        self.cold = LocalBackend(code_root, runner)
        self.preloaded = False  # this process has run the runner's preload
        self.runs = 0
        self._waiting: _Child | None = None

    def runtime_id(self) -> str:
        return self.cold.runtime_id()

    def warm_up(self) -> None:
        """Fork the first job's child now, to prepare itself beside the caller's own work. Later
        jobs fork from this process once it has prepared (see run), so nothing is done then."""
        if self._waiting is not None or self.preloaded or self.runs or not self._can_fork():
            return
        with contextlib.suppress(OSError):  # no process to spare: the job forks its own
            self._waiting = self._fork(preload=True)

    def close(self) -> None:
        child, self._waiting = self._waiting, None
        if child is not None:
            _discard(child)

    def run(self, stdin: bytes, limits: Limits, watch: ResultWatch | None = None) -> Outcome:
        self.runs += 1
        child, self._waiting = self._waiting, None
        if child is None:
            if not self._can_fork():
                return self.cold.run(stdin, limits, watch)
            if not self.preloaded:
                # A second job in this process: prepare once here, and every child after is
                # forked ready (a child preparing itself would pay it per job).
                _resolve(self.runner.preload)()
                self.preloaded = True
            try:
                child = self._fork(preload=False)
            except OSError as exc:
                return Outcome.failed(f"cannot fork the runner: {exc}")
        start = time.monotonic()
        try:
            _hand_over(child, stdin, limits)
            outcome = supervise(child.pid, child.result_r, child.log_r, limits, start, watch)
        except BaseException:
            _discard(child)  # interrupted (Ctrl-C): the job must not outlive the caller
            raise
        finally:
            for fd in (child.result_r, child.log_r):
                with contextlib.suppress(OSError):
                    os.close(fd)
            shutil.rmtree(child.workdir, ignore_errors=True)
        return outcome

    def _can_fork(self) -> bool:
        return forking_allowed() and thread_count() == 1

    def _fork(self, preload: bool) -> _Child:
        """A child that waits for its job's limits on a pipe, its stdin a memfd the job will be
        written into; with `preload` it first runs the runner's preload itself."""
        entry = _resolve(self.runner.entry)  # resolved here: the child's sys.path is the runner's
        prepare = _resolve(self.runner.preload) if preload else None
        argv = _cold_argv(self.runner)
        workdir = tempfile.mkdtemp(prefix="judge-run-")
        fds: list[int] = []
        try:
            fds.append(os.memfd_create("job", os.MFD_CLOEXEC))
            for _ in range(3):
                fds.extend(os.pipe())
            for stream in (sys.stdout, sys.stderr):  # nothing buffered here may reach the child
                with contextlib.suppress(Exception):
                    stream.flush()
            # The child's collections then neither walk nor copy this process's objects.
            pid = -1
            gc.freeze()
            try:
                pid = os.fork()
            finally:
                if pid != 0:  # in this process (the child never returns here)
                    gc.unfreeze()
        except OSError:
            for fd in fds:
                os.close(fd)
            shutil.rmtree(workdir, ignore_errors=True)
            raise
        stdin_fd, go_r, go_w, result_r, result_w, log_r, log_w = fds
        if pid == 0:
            _child(self.code_root, stdin_fd, go_r, result_w, log_w, workdir, prepare, entry, argv)
        for fd in (go_r, result_w, log_w):
            os.close(fd)
        return _Child(pid, workdir, stdin_fd, go_w, result_r, log_r)


def _hand_over(child: _Child, stdin: bytes, limits: Limits) -> None:
    """The job into the waiting child's stdin, then its limits: it starts when they come."""
    try:
        view = memoryview(stdin)
        while view:
            view = view[os.write(child.stdin_fd, view) :]
        # The child's stdin is the same open file: it reads from where this points.
        os.lseek(child.stdin_fd, 0, os.SEEK_SET)
    finally:
        os.close(child.stdin_fd)
    go = {
        "cpu_s": limits.cpu_s,
        "memory_bytes": limits.memory_bytes,
        "file_bytes": limits.file_bytes,
        "processes": limits.processes,
    }
    try:
        # A child that died while it waited (its preparation failed) has closed its end: its
        # exit status and log then say what happened.
        with contextlib.suppress(OSError):
            os.write(child.go_w, json.dumps(go).encode())
    finally:
        os.close(child.go_w)


def _discard(child: _Child) -> None:
    """End a child and everything it started, and forget it."""
    for fd in (child.stdin_fd, child.go_w):
        with contextlib.suppress(OSError):
            os.close(fd)
    kill_group(child.pid)
    with contextlib.suppress(ProcessLookupError):
        os.kill(child.pid, signal.SIGKILL)  # in case it had not made its group yet
    with contextlib.suppress(ChildProcessError):
        os.waitpid(child.pid, 0)
    for fd in (child.result_r, child.log_r):
        with contextlib.suppress(OSError):
            os.close(fd)
    shutil.rmtree(child.workdir, ignore_errors=True)


def _child(
    code_root: Path,
    stdin_fd: int,
    go_r: int,
    result_w: int,
    log_w: int,
    workdir: str,
    prepare: Callable[[], Any] | None,
    entry: Callable[[], Any],
    argv: list[str],
) -> None:
    """The forked child: never returns."""
    try:
        os.setsid()
        os.dup2(stdin_fd, 0, inheritable=True)
        os.dup2(result_w, 1, inheritable=True)
        os.dup2(log_w, 2, inheritable=True)
        os.dup2(go_r, GO_FD, inheritable=False)
        os.closerange(GO_FD + 1, _max_fd())
        # Fresh streams as a new runner's (LANG=C.UTF-8, PYTHONUNBUFFERED): the caller's may
        # hold buffered bytes, or be a notebook's.
        stdin = io.BufferedReader(io.FileIO(0, "r", closefd=False))
        sys.stdin = io.TextIOWrapper(stdin, encoding="utf-8", errors="surrogateescape")
        sys.stdout = io.TextIOWrapper(
            io.FileIO(1, "w", closefd=False), encoding="utf-8", errors="surrogateescape", write_through=True
        )
        sys.stderr = io.TextIOWrapper(
            io.FileIO(2, "w", closefd=False), encoding="utf-8", errors="backslashreplace", write_through=True
        )
        path = _cold_path(code_root, workdir)
        if prepare is not None:
            prepare()  # trusted and job-independent: before the job exists
        limits = wait_for_limits(GO_FD)
        if limits is None:  # the caller is gone or let this child go
            os._exit(0)
        # What the child maps now (the caller's process, torch, the preparation) plus the
        # job's budget: only lowered, which needs no privilege.
        address_space = _vm_size() + int(limits["memory_bytes"]) + ADDRESS_SLACK
        shaped = Limits(
            cpu_s=float(limits["cpu_s"]),
            memory_bytes=int(limits["memory_bytes"]),
            file_bytes=int(limits["file_bytes"]),
            processes=int(limits["processes"]),
        )
        for which, value in rlimits(shaped, address_space):
            resource.setrlimit(which, value)
        os.environ.clear()
        os.environ.update(runner_env(code_root, workdir))
        tempfile.tempdir = None  # computed again from TMPDIR
        os.chdir(workdir)
        sys.path[:] = path
        sys.argv[:] = argv
    except BaseException:
        with contextlib.suppress(Exception):
            os.write(2, ("forked runner setup failed:\n" + traceback.format_exc()).encode())
        os._exit(EXIT_CHILD_SETUP)
    run_and_leave(entry)


def _cold_path(code_root: Path, workdir: str) -> list[str]:
    """sys.path as a new runner starts with it (`python -m` in `workdir`, PYTHONPATH the code
    root): the caller's without its own first entries (its script's folder, its working folder:
    practice/ holds the learner's qwen/ files, which only the job's parts may provide) and its
    PYTHONPATH; the interpreter's and site's entries stay."""
    own = [str(code_root), *os.environ.get("PYTHONPATH", "").split(os.pathsep)]
    with contextlib.suppress(OSError):  # a working folder removed under the caller
        own.append(os.getcwd())
    main = getattr(sys.modules.get("__main__"), "__file__", None)
    if main:
        own.append(os.path.dirname(os.path.abspath(main)))
    drop = {os.path.realpath(p) for p in own if p}
    kept = [p for p in sys.path if p and os.path.realpath(p) not in drop]
    return [workdir, str(code_root), *kept]


def _cold_argv(runner: RunnerSpec) -> list[str]:
    """sys.argv as the cold command sets it: `-m pkg` gives the path of pkg's __main__.py."""
    args = list(runner.cold_args)
    if len(args) >= 2 and args[0] == "-m":
        with contextlib.suppress(ImportError, ValueError):
            spec = importlib.util.find_spec(args[1])
            if spec is not None and spec.origin:
                origin = spec.origin
                if spec.submodule_search_locations is not None:
                    origin = os.path.join(os.path.dirname(origin), "__main__.py")
                return [origin, *args[2:]]
    return args or [""]


def _resolve(spec: str | None) -> Callable[[], Any]:
    assert spec is not None
    module, _, name = spec.partition(":")
    fn: Callable[[], Any] = getattr(importlib.import_module(module), name)
    return fn


def _vm_size() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0


def _max_fd() -> int:
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    return soft if 0 < soft < 1 << 20 else 1 << 20
