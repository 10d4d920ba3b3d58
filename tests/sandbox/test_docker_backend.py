"""The docker backend against a real engine: isolation, limits, outcomes, clean-up."""

from __future__ import annotations

import gc
import socket
import time
from dataclasses import replace

import docker
import pytest

from judge.core.backend import Limits, Outcome, RunnerSpec
from sandbox.docker_backend import DockerBackend
from sandbox.engine import ContainerPolicy, Engine
from sandbox.image import LABEL

# serial: these count every judge container of this process, so no other backend (such as the
# problem tests' shared pool, alive for the whole session) may live in the process meanwhile.
pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.serial]

LIMITS = Limits(startup_s=20, wall_s=5, cpu_s=25, memory_bytes=256 * 1024 * 1024)


def run_py(backend: DockerBackend, code: str, limits: Limits = LIMITS, stdin: bytes = b"") -> Outcome:
    """`code` as the runner: a cold backend on the same engine, built to run `python3 -c code`."""
    return DockerBackend(backend.engine, RunnerSpec(("-c", code))).run(stdin, limits)


def test_streams_are_separate_and_stdin_arrives_whole(docker_backend: DockerBackend) -> None:
    code = "import sys; d = sys.stdin.buffer.read(); sys.stdout.write(str(len(d))); sys.stderr.write('L')"
    out = run_py(docker_backend, code, stdin=b"x" * 3_000_000)
    assert (out.result, out.log, out.exit_code, out.signal) == (b"3000000", b"L", 0, None)
    assert out.ready_s is not None and out.ready_s < out.wall_s


def test_the_container_is_locked_down(docker_backend: DockerBackend) -> None:
    code = """
import os, resource, json
status = dict(l.split(':\\t', 1) for l in open('/proc/self/status').read().splitlines() if ':\\t' in l)
def writable(path):
    try:
        open(path, 'w').close()
        return True
    except OSError:
        return False
mounts = open('/proc/self/mounts').read()
print(json.dumps({
    'uid': os.getuid(), 'gid': os.getgid(),
    'cap_eff': status['CapEff'].strip(), 'cap_bnd': status['CapBnd'].strip(),
    'no_new_privs': status['NoNewPrivs'].strip(),
    'core': resource.getrlimit(resource.RLIMIT_CORE)[0],
    'fsize': resource.getrlimit(resource.RLIMIT_FSIZE)[0],
    'nofile': resource.getrlimit(resource.RLIMIT_NOFILE)[0],
    'root_writable': writable('/usr/x'), 'tmp_writable': writable('/tmp/x'),
    'tmp_mount': [l for l in mounts.splitlines() if ' /tmp ' in l],
    'shm': os.path.exists('/dev/shm'),
    'interfaces': sorted(l.split(':')[0].strip() for l in open('/proc/net/dev').read().splitlines()[2:]),
    'env': sorted(os.environ),
    'omp': os.environ.get('OMP_NUM_THREADS'),
}))
"""
    import json

    out = run_py(docker_backend, code)
    assert out.exit_code == 0, out.log
    facts = json.loads(out.result)
    assert (facts["uid"], facts["gid"]) == (65534, 65534)
    assert int(facts["cap_eff"], 16) == 0 and int(facts["cap_bnd"], 16) == 0
    assert facts["no_new_privs"] == "1"
    assert (facts["core"], facts["fsize"], facts["nofile"]) == (0, LIMITS.file_bytes, 1024)
    assert facts["root_writable"] is False and facts["tmp_writable"] is True
    (tmp_mount,) = facts["tmp_mount"]
    assert tmp_mount.startswith("tmpfs /tmp tmpfs") and "nosuid" in tmp_mount and "nodev" in tmp_mount
    assert facts["shm"] is False
    assert facts["interfaces"] == ["lo"]
    assert facts["omp"] == "1"
    # Only what the image and the backend set: nothing from the judge's own environment.
    assert set(facts["env"]) <= {
        "PATH", "LANG", "PYTHONPATH", "PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED", "HOME", "TMPDIR",
        "PYTHONHASHSEED", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MALLOC_ARENA_MAX",
        "HOSTNAME",
    }  # fmt: skip


def test_wall_clock_starts_when_the_runner_is_ready(docker_backend: DockerBackend) -> None:
    # Two seconds of "start-up" before the first result byte do not count against wall_s=1.5.
    code = "import time, sys; time.sleep(2); sys.stdout.write('R'); sys.stdout.flush(); time.sleep(60)"
    out = run_py(docker_backend, code, replace(LIMITS, wall_s=1.5))
    assert out.timed_out and not out.startup_timed_out
    assert out.ready_s is not None and out.ready_s >= 2.0
    assert out.wall_s - out.ready_s < 1.5 + 1.5


def test_a_runner_that_never_gets_ready_is_a_startup_timeout(docker_backend: DockerBackend) -> None:
    out = run_py(docker_backend, "import time; time.sleep(60)", replace(LIMITS, startup_s=2))
    assert out.startup_timed_out and not out.timed_out and out.ready_s is None
    assert out.wall_s < 2 + 2


def test_oom_kill_is_reported_as_memory(docker_backend: DockerBackend) -> None:
    code = "import sys; sys.stdout.write('R'); sys.stdout.flush(); x = [b'x' * 10**7 for _ in range(200)]"
    out = run_py(docker_backend, code, replace(LIMITS, memory_bytes=64 * 1024 * 1024))
    assert out.memory_exceeded and out.signal == 9, out


def test_output_caps_stop_the_run(docker_backend: DockerBackend) -> None:
    log = run_py(
        docker_backend,
        "import sys\nwhile True: sys.stderr.write('x' * 4096)",
        replace(LIMITS, log_bytes=8192),
    )
    assert log.log_overflow and len(log.log) == 8192
    res = run_py(
        docker_backend,
        "import sys\nwhile True: sys.stdout.write('x' * 4096)",
        replace(LIMITS, result_bytes=65536),
    )
    assert res.result_overflow and len(res.result) == 65536


def test_signals_and_exit_codes(docker_backend: DockerBackend) -> None:
    seg = run_py(docker_backend, "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)")
    assert (seg.signal, seg.exit_code) == (11, None)
    ex = run_py(docker_backend, "raise SystemExit(3)")
    assert (ex.signal, ex.exit_code) == (None, 3)


def test_cpu_limit_stops_a_spinner(docker_backend: DockerBackend) -> None:
    out = run_py(
        docker_backend,
        "import sys; sys.stdout.write('R'); sys.stdout.flush()\nwhile True: pass",
        replace(LIMITS, cpu_s=1, wall_s=20),
    )
    assert out.cpu_exceeded and out.signal == 24  # SIGXCPU
    assert out.wall_s < 15


def test_every_container_is_removed(docker_backend: DockerBackend) -> None:
    run_py(docker_backend, "print('hi')")
    run_py(docker_backend, "import time; time.sleep(60)", replace(LIMITS, startup_s=1))
    assert docker_backend.containers() == []


def test_a_dead_judges_containers_are_reaped(docker_backend: DockerBackend) -> None:
    client = docker_backend.client
    dead_pid = 2**22 + 12345  # above pid_max: no such process
    orphan = client.containers.create(
        docker_backend.image,
        ["sleep", "600"],
        labels={LABEL: "run", f"{LABEL}.owner": f"{socket.gethostname()}:{dead_pid}"},
        network_mode="none",
    )
    orphan.start()
    live = client.containers.create(
        docker_backend.image,
        ["true"],
        labels={LABEL: "run", f"{LABEL}.owner": docker_backend.engine.owner},
        network_mode="none",
    )
    try:
        removed = docker_backend.engine.reap_stale()
        assert orphan.id in removed and live.id not in removed
        assert docker_backend.containers() == [live.id]
    finally:
        live.remove(force=True)


# docker-py's unix transport leaks its socket when connect() fails; collect it here.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_engine_failure_is_retried_then_a_system_error(docker_backend: DockerBackend) -> None:
    engine = Engine(docker_backend.client, docker_backend.image, ContainerPolicy(retries=1))
    # A real client of an engine that is not there (version given: it would ask the engine).
    engine.client = docker.DockerClient(base_url="unix:///tmp/no-docker-engine-here.sock", version="1.41")
    broken = DockerBackend(engine, RunnerSpec(("-c", "pass")))
    started = time.monotonic()
    out = broken.run(b"", LIMITS)
    assert out.system_error and "failed 2 times" in out.system_error
    assert time.monotonic() - started >= 0.5  # it waited before the retry
    del broken, engine
    gc.collect()
