"""The forked local backend with real processes: each job's child is forked from a caller
(tests/judge/core/forked_jobs.py, a process of its own), and whatever the job does ends the
child, never the caller, within the local backend's limits."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from judge.core.backend import Limits, RunnerSpec
from judge.core.execution import RUNNER
from judge.core.forked import ForkedBackend, fork_available, local_backend
from judge.core.local import LocalBackend
from tests.paths import REPO_ROOT

pytestmark = pytest.mark.skipif(not fork_available(), reason="the forked backend is Linux's")


def caller(
    entry: str,
    limits: Limits | None = None,
    *flags: str,
    cwd: Path = REPO_ROOT,
    stdin: bytes = b"",
    env: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Run `entry`'s jobs from a caller process of its own; what it printed (outcomes, its pid)."""
    limits = limits or Limits(startup_s=10, wall_s=5)
    fields = {k: getattr(limits, k) for k in ("startup_s", "wall_s", "cpu_s", "memory_bytes", "file_bytes")}
    done = subprocess.run(
        [sys.executable, "-m", "tests.judge.core.forked_jobs", entry, json.dumps(fields), *flags],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT), **(env or {})},
    )
    assert done.returncode == 0, done.stderr.decode()  # the caller lived through its jobs
    found: dict[str, Any] = json.loads(done.stdout)
    return found


def test_the_job_runs_in_a_child_of_the_caller_as_a_new_runner_would(tmp_path: Path) -> None:
    learner = tmp_path / "learner"
    learner.mkdir()
    (learner / "learner_module.py").write_text("x = 1\n")
    limits = Limits(startup_s=10, wall_s=5, memory_bytes=64 << 20)
    ran = caller("echo", limits, cwd=learner, stdin=b"x" * 100_000)
    out = ran["outcomes"][0]
    assert (out["exit_code"], out["signal"], out["log"]) == (0, None, "L")
    seen = json.loads(out["result"])
    assert seen["stdin"] == 100_000  # the whole job, as its stdin
    assert seen["ppid"] == ran["pid"] and seen["pgid"] == seen["pid"]  # forked, its own group
    assert (seen["core"], seen["fsize"]) == (0, Limits().file_bytes)
    assert seen["cpu"] == Limits().cpu_s
    # What it mapped when its job came, plus the job's 64 MiB and the slack: well under a new
    # runner's 1 GiB + budget would be wrong; what matters is that there is a limit.
    assert 0 < seen["address_space"] < 64 << 30
    # The local backend's fixed environment and a fresh folder, not the caller's.
    assert seen["home"] == seen["cwd"] != str(learner) and Path(seen["cwd"]).name.startswith("judge-run-")
    assert "PYTHONHASHSEED" in seen["environ"] and "JUDGE_REQUIRE_DOCKER" not in seen["environ"]
    assert seen["path"] == [seen["cwd"], str(REPO_ROOT)]
    assert not seen["learner_module"]  # the caller's working folder is not on sys.path
    assert not Path(seen["cwd"]).exists()  # removed after the run


def test_the_first_child_prepares_itself_and_later_ones_are_forked_prepared() -> None:
    ran = caller("echo", None, "--warm", "--jobs", "2")
    first, second = (json.loads(o["result"]) for o in ran["outcomes"])
    assert first["preloaded_here"] and not first["preloaded_in_caller"]
    assert second["preloaded_in_caller"] and not second["preloaded_here"]
    assert ran["preloaded"] == [ran["pid"]]


def test_a_job_that_exits_ends_its_child_with_its_status() -> None:
    assert caller("sys_exit")["outcomes"][0]["exit_code"] == 3
    assert caller("os_exit")["outcomes"][0]["exit_code"] == 5


def test_a_segfault_ends_the_child_only() -> None:
    out = caller("segfault")["outcomes"][0]
    assert (out["result"], out["signal"], out["exit_code"]) == ("go", signal.SIGSEGV, None)


def test_the_cpu_limit_stops_a_spin() -> None:
    out = caller("spin", Limits(startup_s=10, wall_s=30, cpu_s=1))["outcomes"][0]
    # As tests/judge/core/test_local.py: the kernel's tick decides; it spun, and not for long.
    assert out["cpu_exceeded"] and out["cpu_s"] > 0.6 and out["wall_s"] < 10


def test_the_wall_clock_kills_the_whole_group() -> None:
    out = caller("sleep_with_a_child", Limits(startup_s=10, wall_s=1))["outcomes"][0]
    assert out["timed_out"] and not out["startup_timed_out"]
    grandchild = int(out["result"])
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            os.kill(grandchild, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        raise AssertionError("the job's own child outlived the run")


def test_a_huge_allocation_is_refused_by_the_address_space_limit() -> None:
    out = caller("allocate", Limits(startup_s=10, wall_s=10, memory_bytes=64 << 20))["outcomes"][0]
    assert (out["result"], out["exit_code"]) == ("memory", 0)


@pytest.mark.parametrize(
    ("flags", "env"), [(("--thread",), {}), ((), {"JUDGE_LOCAL_FORK": "0"})], ids=["threads", "switched-off"]
)
def test_a_caller_with_threads_or_the_switch_off_runs_the_cold_command(
    flags: tuple[str, ...], env: dict[str, str]
) -> None:
    out = caller("echo", None, *flags, env=env)["outcomes"][0]
    assert (out["result"], out["exit_code"]) == ("cold", 0)


def test_local_backend_forks_only_a_runner_it_can_preload(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("JUDGE_LOCAL_FORK", raising=False)
    assert isinstance(local_backend(REPO_ROOT, RUNNER), ForkedBackend)
    assert isinstance(local_backend(REPO_ROOT, RUNNER, fork=False), LocalBackend)
    assert isinstance(local_backend(REPO_ROOT, RunnerSpec(("-c", "pass"))), LocalBackend)
    monkeypatch.setenv("JUDGE_LOCAL_FORK", "0")
    assert isinstance(local_backend(REPO_ROOT, RUNNER), LocalBackend)
