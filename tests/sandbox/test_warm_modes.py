"""Warm and fork-server containers against a real engine, seen from inside their jobs.

The jobs here are `sandbox.probe` (Python source on stdin), so each test looks at what a
job gets: its user, capabilities, filter, limits and folder; and at what it leaves for the
next job in the same fork server: no process, no file, no byte of its memory.
"""

from __future__ import annotations

import json
import os
import secrets
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from judge.core.backend import Limits, Outcome, RunnerSpec
from sandbox import probe
from sandbox.docker_backend import DockerBackend
from sandbox.docker_warm import Mode, PoolPolicy
from sandbox.engine import Engine

# serial: these count every judge container of this process, so no other backend (such as the
# problem tests' shared pool, alive for the whole session) may live in the process meanwhile.
pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.serial]

# Which container a job ran in (its cgroup, as the container's init sees it).
WHERE = "print(open('/proc/1/cgroup').read()[-80:])"
LIMITS = Limits(startup_s=20, wall_s=5, cpu_s=10, memory_bytes=256 * 1024 * 1024, log_bytes=4096)

FACTS = """
import json, os, resource
status = dict(l.split(':\\t', 1) for l in open('/proc/self/status').read().splitlines() if ':\\t' in l)
def can_write(path):
    try:
        open(path, 'w').close()
        return True
    except OSError:
        return False
print(json.dumps({
    'uid': os.getuid(), 'gid': os.getgid(), 'groups': os.getgroups(),
    'cap_eff': status['CapEff'].strip(), 'cap_prm': status['CapPrm'].strip(),
    'no_new_privs': status['NoNewPrivs'].strip(), 'seccomp': status['Seccomp'].strip(),
    'cwd': os.getcwd(), 'cwd_mode': oct(os.stat('.').st_mode & 0o777),
    'home': os.environ['HOME'], 'tmp_writable': can_write('/tmp/x'), 'cwd_writable': can_write('x'),
    'cpu': resource.getrlimit(resource.RLIMIT_CPU)[0], 'fsize': resource.getrlimit(resource.RLIMIT_FSIZE)[0],
    'nproc': resource.getrlimit(resource.RLIMIT_NPROC)[0],
    'core': resource.getrlimit(resource.RLIMIT_CORE)[0],
    'open_fds': sorted(int(f) for f in os.listdir('/proc/self/fd')),
}))
"""


def backend_for(backend: DockerBackend, mode: Mode, **policy: object) -> DockerBackend:
    pool = PoolPolicy(mode=mode, size=1, **policy)  # type: ignore[arg-type]
    return DockerBackend(backend.engine, probe.RUNNER, pool)


@pytest.fixture(params=["warm", "fork"])
def pooled(request: pytest.FixtureRequest, docker_backend: DockerBackend) -> Iterator[DockerBackend]:
    backend = backend_for(docker_backend, request.param)
    yield backend
    backend.close()


@pytest.fixture
def fork(docker_backend: DockerBackend) -> Iterator[DockerBackend]:
    backend = backend_for(docker_backend, "fork", recycle_after=50)
    yield backend
    backend.close()


def job(backend: DockerBackend, code: str, limits: Limits = LIMITS) -> Outcome:
    return backend.run(code.encode(), limits)


def output(outcome: Outcome) -> str:
    assert outcome.system_error is None, outcome.system_error
    text = outcome.result.decode()
    assert text.startswith("ready\n"), (text, outcome.log)
    return text[len("ready\n") :]


def test_a_pooled_job_is_locked_down(pooled: DockerBackend) -> None:
    facts = json.loads(output(job(pooled, FACTS)))
    assert int(facts["cap_eff"], 16) == 0 and int(facts["cap_prm"], 16) == 0
    assert facts["no_new_privs"] == "1"
    assert facts["seccomp"] == "2"  # a filter of our own on top of Docker's
    assert facts["open_fds"] == [0, 1, 2, 3]  # the three streams, and listdir's own
    assert (facts["cpu"], facts["fsize"], facts["core"]) == (10, LIMITS.file_bytes, 0)
    assert facts["cwd"] == facts["home"] and facts["cwd"].startswith("/tmp/job-")
    assert facts["cwd_mode"] == "0o700" and facts["cwd_writable"] is True
    if pooled.mode == "fork":
        assert facts["uid"] >= 1_000_000 and facts["gid"] == facts["uid"] and facts["groups"] == []
        assert facts["tmp_writable"] is False  # only the job's own folder
        assert facts["nproc"] == LIMITS.processes
    else:
        assert (facts["uid"], facts["gid"]) == (65534, 65534)


def test_a_pooled_job_child_is_set_up_before_its_job_exists(pooled: DockerBackend) -> None:
    # The probe's warm function records what the waiting child was when it ran: still the
    # server's user (no process holds a job's uid before its job) and not yet under the
    # job's limits; the job itself then runs as its own user with its own limits (the test
    # above). (Its payload may already be on the way: the server does not wait for it.)
    code = (
        "import json, os, sandbox.probe; print(json.dumps({**sandbox.probe.WARMED, 'uid_now': os.getuid()}))"
    )
    warmed = json.loads(output(job(pooled, code)))
    assert warmed["cpu"] != 10  # not yet the job's RLIMIT_CPU
    if pooled.mode == "fork":
        assert warmed["uid"] == 0 and warmed["uid_now"] >= 1_000_000
    else:
        assert warmed["uid"] == warmed["uid_now"] == 65534


def test_denied_calls_fail_cleanly_and_the_server_cannot_be_signalled(pooled: DockerBackend) -> None:
    code = """
import ctypes, errno, json, os, signal, socket
libc = ctypes.CDLL(None, use_errno=True)
def err(fn):
    try:
        fn()
        return 'allowed'
    except OSError as exc:
        return errno.errorcode[exc.errno]
def raw(rc):
    return 'allowed' if rc == 0 else errno.errorcode[ctypes.get_errno()]
print(json.dumps({
    'socket': err(lambda: socket.socket(socket.AF_UNIX)),
    'unshare': raw(libc.unshare(0x10000000)),
    'ptrace': raw(libc.ptrace(16, os.getppid(), 0, 0)),
    'kill_server': err(lambda: os.kill(os.getppid(), signal.SIGKILL)),
    'kill_all': err(lambda: os.kill(-1, signal.SIGKILL)),
    'kill_init': err(lambda: os.kill(1, signal.SIGKILL)),
    'shmget': raw(0 if libc.shmget(0, 4096, 0o1666) >= 0 else -1),
    'own_child': own_child(),
}))
"""
    code = (
        "import os\ndef own_child():\n    pid = os.fork()\n    if pid == 0:\n        os._exit(3)\n"
        "    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])\n"
    ) + code
    facts = json.loads(output(job(pooled, code)))
    assert facts == {
        "socket": "EPERM",
        "unshare": "EPERM",
        "ptrace": "EPERM",
        "kill_server": "EPERM",
        "kill_all": "EPERM",
        "kill_init": "EPERM",
        "shmget": "EPERM",
        "own_child": 3,
    }
    # The server lived through it and serves the next job.
    assert output(job(pooled, "print('next')")) == "next\n"


def test_each_warm_job_gets_a_container_no_job_used(docker_backend: DockerBackend) -> None:
    warm = backend_for(docker_backend, "warm")
    try:
        first = output(job(warm, WHERE + "\nopen('/tmp/left-behind', 'w').close()"))
        second = output(job(warm, WHERE + "\nprint(__import__('os').path.exists('/tmp/left-behind'))"))
        assert second.split("\n")[0] != first.split("\n")[0] and second.endswith("False\n")
        assert warm.pool is not None and warm.pool.started >= 2
        assert warm.pool.fill(60)
        warm.pool.settle()
        # Only the one ready container is left: both used ones are gone.
        assert len(warm.containers(kind="warm")) == 1
    finally:
        warm.close()
    assert warm.containers() == []


def test_a_fork_job_leaves_nothing_for_the_next(fork: DockerBackend) -> None:
    secret = "LEAK-" + secrets.token_hex(12)
    control = "LEAK-" + secrets.token_hex(12)  # never sent to any job before the scan
    # The secret sits far into the source (past where the next job's payload ends) and in
    # the output, so a server that kept either in memory would hand it to the next child.
    first = (
        "#"
        + "-" * 20_000
        + f"""
import os, subprocess, sys
secret = {secret!r}
with open('notes.txt', 'w') as f:
    f.write(secret * 1000)
sys.stdout.write(secret + ' ')
# A daemon that leaves the session and outlives the job.
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        import time
        time.sleep(300)
    os._exit(0)
print(os.getuid(), os.getcwd())
"""
    )
    echoed, uid, folder = output(job(fork, first)).split()
    assert echoed == secret
    assert not _host_processes_of(int(uid)), "the daemon of the first job outlived it"
    # The second job: another user, the first one's folder gone, and none of its bytes in
    # the memory it was forked with. The two markers are looked for in the same way, so
    # the needles' own copies count the same for both.
    scan = f"""
import ctypes, os
needles = {{'secret': {secret[::-1]!r}[::-1].encode(), 'control': {control[::-1]!r}[::-1].encode()}}
counts = dict.fromkeys(needles, 0)
# Read straight from the address space (a non-dumpable process cannot open /proc/self/mem).
with open('/proc/self/maps') as maps:
    regions = [line.split() for line in maps]
for fields in regions:
    perms, name = fields[1], (fields[5] if len(fields) > 5 else '')
    if not perms.startswith('r') or name in ('[vvar]', '[vsyscall]', '[vvar_vclock]'):
        continue
    lo, hi = (int(x, 16) for x in fields[0].split('-'))
    data = ctypes.string_at(lo, hi - lo)
    for key, needle in needles.items():
        counts[key] += data.count(needle)
    del data
print(os.getuid(), os.path.exists({folder!r}), counts['secret'] - counts['control'])
"""
    uid2, folder_exists, excess = output(job(fork, scan, replace(LIMITS, wall_s=20))).split()
    assert uid2 != uid
    assert folder_exists == "False"
    assert excess == "0", "the first job's data is readable in the second job's memory"


def test_time_and_output_limits_end_the_job_not_the_server(fork: DockerBackend) -> None:
    spin = job(fork, "while True: pass", replace(LIMITS, wall_s=1))
    assert spin.timed_out and spin.ready_s is not None and spin.wall_s < 1 + 3
    flood_code = "import sys\nwhile True: sys.stdout.write('x' * 65536)"
    flood = job(fork, flood_code, replace(LIMITS, result_bytes=1 << 20))
    assert flood.result_overflow and len(flood.result) <= 1 << 20
    cpu = job(fork, "import threading\nwhile True: pass", replace(LIMITS, cpu_s=1, wall_s=10))
    assert cpu.cpu_exceeded or cpu.timed_out
    memory = job(fork, "x = bytearray(600 * 1024 * 1024)\nprint('allocated')")
    assert b"MemoryError" in memory.log and memory.exit_code not in (0, None)
    assert output(job(fork, "print('fine')")) == "fine\n"


def test_a_pool_that_cannot_start_falls_back_to_cold_runs(docker_backend: DockerBackend) -> None:
    # Its entry point does not exist: every server fails before it is ever ready. Jobs are
    # still judged (cold, the same lock-down) and nothing waits for a container that never comes.
    broken = DockerBackend(
        docker_backend.engine,
        replace(probe.RUNNER, entry="sandbox.no_such_module:main"),
        PoolPolicy(mode="fork", size=1, startup_s=30),
    )
    try:
        assert output(job(broken, "print(6 * 7)")) == "42\n"
        assert broken.pool is not None and "no_such_module" in str(broken.pool.last_error)
        assert broken.pool.failures >= 1 and broken.pool.started == 0
        assert output(job(broken, "print('again')")) == "again\n"
    finally:
        broken.close()
    assert broken.containers() == []


def test_the_pool_serves_the_runner_whatever_its_cold_command(docker_backend: DockerBackend) -> None:
    # The backend chooses the path from its runner spec, not by matching a command: a cold
    # command of any shape (here one that could only fail) leaves pooled jobs pooled.
    runner = replace(probe.RUNNER, cold_args=("-c", "raise SystemExit(9)"))
    backend = DockerBackend(docker_backend.engine, runner, PoolPolicy(mode="fork", size=1))
    try:
        facts = json.loads(output(job(backend, FACTS)))
        assert facts["uid"] >= 1_000_000  # a fork server's child, not a cold container
        assert backend.containers(kind="run") == []
    finally:
        backend.close()


def test_a_pool_needs_a_runner_it_can_preload(docker_backend: DockerBackend) -> None:
    cold_only = RunnerSpec(("-c", "pass"))
    with pytest.raises(ValueError, match="preload"):
        DockerBackend(docker_backend.engine, cold_only, PoolPolicy(mode="warm"))
    assert DockerBackend(docker_backend.engine, cold_only, PoolPolicy(mode="cold")).pool is None


def test_a_fork_server_is_recycled_after_its_jobs(docker_backend: DockerBackend) -> None:
    backend = backend_for(docker_backend, "fork", recycle_after=2)
    try:
        hosts = [output(job(backend, WHERE)) for _ in range(3)]
        assert hosts[0] == hosts[1] != hosts[2]
        assert backend.pool is not None and backend.pool.started >= 2
    finally:
        backend.close()
    assert backend.containers() == []


def test_pool_containers_of_a_dead_judge_are_reaped(docker_backend: DockerBackend) -> None:
    engine = Engine(docker_backend.client, docker_backend.image)
    host = engine.owner.split(":")[0]
    engine.owner = f"{host}:{_dead_pid()}"  # as if the judge that made them had crashed
    backend = DockerBackend(engine, probe.RUNNER, PoolPolicy(mode="fork", size=1))
    try:
        assert backend.pool is not None and backend.pool.fill(60)
        (cid,) = backend.containers(kind="fork")
        assert cid in docker_backend.engine.reap_stale()
    finally:
        backend.close()
    assert backend.containers() == []


def _dead_pid() -> int:
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    return pid


def _host_processes_of(uid: int) -> list[int]:
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            status = Path(f"/proc/{entry}/status").read_text()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        if int(fields["Uid"].split()[0]) == uid and not fields["State"].strip().startswith("Z"):
            pids.append(int(entry))
    return pids


# The result stream's bytes reach a watch as the job writes them (a judgement's progress is read
# from it), not when it ends: on a cold run and in both kinds of pooled container.
STAGED = "import sys, time\nsys.stdout.write('A'); sys.stdout.flush(); time.sleep(0.8); sys.stdout.write('B')"


def watched(backend: DockerBackend) -> tuple[Outcome, list[tuple[bytes, float]]]:
    seen: list[tuple[bytes, float]] = []
    outcome = backend.run(STAGED.encode(), LIMITS, lambda chunk: seen.append((chunk, time.monotonic())))
    return outcome, seen


def check_watched(outcome: Outcome, seen: list[tuple[bytes, float]]) -> None:
    assert output(outcome).endswith("AB")
    assert b"".join(chunk for chunk, _ in seen) == outcome.result
    first_a = next(at for chunk, at in seen if b"A" in chunk)
    last_b = next(at for chunk, at in seen if b"B" in chunk)
    assert last_b - first_a > 0.5


def test_a_pooled_job_s_result_is_watched_as_it_comes(pooled: DockerBackend) -> None:
    check_watched(*watched(pooled))


def test_a_cold_job_s_result_is_watched_as_it_comes(docker_backend: DockerBackend) -> None:
    check_watched(*watched(DockerBackend(docker_backend.engine, probe.RUNNER)))
