"""The local backend with a real child process: limits, group kill, output caps."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from judge.core.backend import Limits, Outcome, RunnerSpec
from judge.core.local import LocalBackend
from tests.paths import REPO_ROOT


def run_py(code: str, limits: Limits | None = None, stdin: bytes = b"") -> Outcome:
    """`code` as the runner: a backend built to run `python -c code` for every job."""
    backend = LocalBackend(code_root=REPO_ROOT, runner=RunnerSpec(("-c", code)))
    return backend.run(stdin, limits or Limits(startup_s=10, wall_s=5))


def test_result_and_log_streams_are_separate() -> None:
    out = run_py("import sys; sys.stdout.write('R'); sys.stderr.write('L')")
    assert (out.result, out.log, out.exit_code, out.signal) == (b"R", b"L", 0, None)


def test_stdin_is_delivered_and_limits_are_in_place() -> None:
    code = (
        "import sys, resource\n"
        "data = sys.stdin.buffer.read()\n"
        "core = resource.getrlimit(resource.RLIMIT_CORE)[0]\n"
        "fsize = resource.getrlimit(resource.RLIMIT_FSIZE)[0]\n"
        "print(len(data), core, fsize)"
    )
    out = run_py(code, stdin=b"x" * 1_000_000)
    assert out.result.split() == [b"1000000", b"0", str(Limits().file_bytes).encode()]


def test_wall_clock_starts_at_first_result_byte() -> None:
    started = time.monotonic()
    out = run_py(
        "import sys, time\ntime.sleep(1.5)\nsys.stdout.write('ready'); sys.stdout.flush()\ntime.sleep(60)",
        Limits(startup_s=10, wall_s=1),
    )
    assert out.timed_out and not out.startup_timed_out
    assert 2.4 < time.monotonic() - started < 6


def test_startup_timeout_is_distinct() -> None:
    out = run_py("import time; time.sleep(60)", Limits(startup_s=1, wall_s=30))
    assert out.startup_timed_out and not out.timed_out


def test_whole_process_group_is_killed(tmp_path: Path) -> None:
    pidfile = tmp_path / "child.pid"
    code = (
        "import os, sys, time\n"
        "pid = os.fork()\n"
        "if pid == 0:\n    time.sleep(120)\n    os._exit(0)\n"
        f"open({str(pidfile)!r}, 'w').write(str(pid))\n"
        "sys.stdout.write('ready'); sys.stdout.flush()\n"
        "time.sleep(120)\n"
    )
    out = run_py(code, Limits(startup_s=10, wall_s=1))
    assert out.timed_out
    child = int(pidfile.read_text())
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        raise AssertionError("the forked child outlived the run")


def test_output_caps() -> None:
    out = run_py(
        "import sys\nsys.stderr.write('e' * 100000)\nsys.stderr.flush()\nimport time; time.sleep(30)",
        Limits(startup_s=10, wall_s=10, log_bytes=1000),
    )
    assert out.log_overflow and len(out.log) == 1000
    out = run_py(
        "import sys\nsys.stdout.write('r' * 100000)", Limits(startup_s=10, wall_s=10, result_bytes=500)
    )
    assert out.result_overflow and len(out.result) == 500


def test_cpu_limit_stops_a_spin() -> None:
    out = run_py(
        "import sys\nsys.stdout.write('go'); sys.stdout.flush()\nwhile True: pass",
        Limits(startup_s=10, wall_s=30, cpu_s=1),
    )
    # The kernel sends SIGXCPU at its own tick for RLIMIT_CPU; the rusage the parent reads after
    # has been seen 10-15% short of the limit on a loaded machine. It spun, and not for long.
    assert out.cpu_exceeded and out.cpu_s > 0.6 and out.wall_s < 10


def test_missing_interpreter_is_a_system_error() -> None:
    backend = LocalBackend(
        code_root=REPO_ROOT, runner=RunnerSpec(("-c", "pass")), python="/nonexistent/python"
    )
    out = backend.run(b"", Limits())
    assert out.system_error and "cannot start" in out.system_error


def test_the_runner_is_started_with_the_backends_own_interpreter() -> None:
    out = run_py("import sys; sys.stdout.write(sys.executable)")
    assert out.result.decode() == sys.executable, out.log
