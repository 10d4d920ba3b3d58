"""Runners for tests/judge/core/test_forked.py, and the process that forks them.

`python -m tests.judge.core.forked_jobs ENTRY LIMITS [--warm] [--jobs N] [--thread]` builds a
ForkedBackend whose runner preloads with `preload` and runs `ENTRY` (a function below) in each
job's child, runs N jobs (stdin: this process's stdin), and prints one JSON line: each job's
outcome, this process's own state after them, and its pid. It is a process of its own because
the test runner's process may have threads (pytest-xdist's), and a process with threads never
forks (judge.core.forked): the cold command (`COLD`) would run instead.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import resource
import sys
import threading
import time
from dataclasses import asdict
from pathlib import Path

from judge.core.backend import Limits, RunnerSpec
from judge.core.forked import ForkedBackend

COLD = "import sys; sys.stdout.write('cold')"
PRELOADED: list[int] = []  # pids of the processes the preload ran in


def preload() -> None:
    PRELOADED.append(os.getpid())


def _result(text: str) -> None:
    os.write(1, text.encode())


def echo() -> None:
    """Says what the job's process looks like from inside."""
    data = sys.stdin.buffer.read()
    try:
        import learner_module  # noqa: F401 - in the caller's working folder only

        found = True
    except ImportError:
        found = False
    seen = {
        "stdin": len(data),
        "ppid": os.getppid(),
        "pgid": os.getpgid(0),
        "pid": os.getpid(),
        "core": resource.getrlimit(resource.RLIMIT_CORE)[0],
        "fsize": resource.getrlimit(resource.RLIMIT_FSIZE)[0],
        "cpu": resource.getrlimit(resource.RLIMIT_CPU)[0],
        "address_space": resource.getrlimit(resource.RLIMIT_AS)[0],
        "cwd": os.getcwd(),
        "home": os.environ.get("HOME"),
        "environ": sorted(os.environ),
        "path": sys.path[:2],
        "learner_module": found,
        "preloaded_here": os.getpid() in PRELOADED,
        "preloaded_in_caller": os.getppid() in PRELOADED,
    }
    _result(json.dumps(seen))
    sys.stderr.write("L")


def sys_exit() -> None:
    _result("go")
    sys.exit(3)


def os_exit() -> None:
    _result("go")
    os._exit(5)


def segfault() -> None:
    _result("go")
    ctypes.string_at(0)


def spin() -> None:
    _result("go")
    while True:
        pass


def sleep_with_a_child() -> None:
    """Starts a process of its own that would sleep for two minutes, says its pid, and sleeps."""
    pid = os.fork()
    if pid == 0:
        time.sleep(120)
        os._exit(0)
    _result(str(pid))
    time.sleep(120)


def allocate() -> None:
    """Four GiB more than the job's budget: the address-space limit refuses it."""
    try:
        block = bytearray(4 << 30)
    except MemoryError:
        _result("memory")
        return
    _result(f"allocated {len(block)}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("entry")
    parser.add_argument("limits", help="Limits as JSON")
    parser.add_argument("--warm", action="store_true")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--thread", action="store_true", help="run the jobs with a second thread alive")
    parser.add_argument("--code-root", default=str(Path(__file__).resolve().parents[3]))
    args = parser.parse_args()
    runner = RunnerSpec(
        cold_args=("-c", COLD), preload=f"{__name__}:preload", entry=f"{__name__}:{args.entry}"
    )
    backend = ForkedBackend(Path(args.code_root), runner)
    stop = threading.Event()
    if args.thread:
        threading.Thread(target=stop.wait, daemon=True).start()
    stdin = sys.stdin.buffer.read()
    outcomes = []
    for _ in range(args.jobs):
        if args.warm:
            backend.warm_up()
        outcome = asdict(backend.run(stdin, Limits(**json.loads(args.limits))))
        outcome["result"] = outcome["result"].decode(errors="replace")
        outcome["log"] = outcome["log"].decode(errors="replace")
        outcomes.append(outcome)
    stop.set()
    backend.close()
    print(json.dumps({"outcomes": outcomes, "pid": os.getpid(), "preloaded": PRELOADED}))


if __name__ == "__main__":
    main()
