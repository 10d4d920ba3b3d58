"""Places a job can write that outlive it: found from inside jobs, in every mode.

A job may write its own folder and nothing else that a later job could read. Docker mounts
a writable mqueue filesystem at /dev/mqueue in every container: a queue made there with
open(2) (mq_open was refused, mq_timedsend on the descriptor was not) stayed in a fork
server's container, and the next job, another learner's under another uid, read it. These
tests look for every writable place from inside a job, try that attack in each mode, and
check that a fork server which finds anything left after a job retires its container.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from judge.core.backend import Limits, Outcome
from sandbox import forkserver, probe
from sandbox.docker_backend import DockerBackend
from sandbox.docker_warm import Mode, PoolPolicy
from sandbox.engine import Engine

DOCKER = [pytest.mark.docker, pytest.mark.slow]
LIMITS = Limits(startup_s=20, wall_s=20, cpu_s=30, memory_bytes=256 * 1024 * 1024, log_bytes=64 * 1024)
# Which container a job ran in, on one line: its cgroup as the container's init sees it, and
# its root mount (an overlay with a layer of its own). (Not /tmp's device number: a removed
# container's number is given to the next tmpfs.)
WHERE = (
    "print(repr((open('/proc/1/cgroup').read(),"
    " [m for m in open('/proc/self/mounts') if m.split()[1] == '/'])))"
)

# Every directory and every file that is not a device which this job may write, walking the
# whole tree but /proc and /sys (per-process and read-only kernel views). A folder a job
# cannot list (fork mode's /tmp, mode 0711) is not walked: what is under it is the server's,
# but for the job's own folder, walked too.
WRITABLE = """
import itertools, json, os, stat
found = set()
for base, dirs, files in itertools.chain(os.walk('/'), os.walk(os.getcwd())):
    if base.startswith(('/proc', '/sys')):
        dirs[:] = []
        continue
    if os.access(base, os.W_OK):
        found.add(base)
    for name in files:
        path = os.path.join(base, name)
        try:
            mode = os.lstat(path).st_mode
        except OSError:
            continue
        if not (stat.S_ISCHR(mode) or stat.S_ISBLK(mode) or stat.S_ISLNK(mode)) and os.access(path, os.W_OK):
            found.add(path)
mounts = [line.split() for line in open('/proc/self/mounts')]
print(json.dumps({
    'writable': sorted(found), 'cwd': os.getcwd(), 'uid': os.getuid(),
    'mqueue': [m[2] + ' ' + m[3].split(',')[0] for m in mounts if m[1] == '/dev/mqueue'],
}))
"""

# The mq_* calls by number (the kernel's tables: x86_64 syscall_64.tbl, the generic one for
# aarch64), called straight through syscall(2): a filter that missed one would let it through.
MQ_CALLS = """
import ctypes, errno, os, platform
libc = ctypes.CDLL(None, use_errno=True)
MQ = {
    'x86_64': {'mq_open': 240, 'mq_unlink': 241, 'mq_timedsend': 242, 'mq_timedreceive': 243,
               'mq_notify': 244, 'mq_getsetattr': 245},
    'aarch64': {'mq_open': 180, 'mq_unlink': 181, 'mq_timedsend': 182, 'mq_timedreceive': 183,
                'mq_notify': 184, 'mq_getsetattr': 185},
}[platform.machine()]
def call(name, *args):
    ctypes.set_errno(0)
    rc = libc.syscall(MQ[name], *args)
    return rc, errno.errorcode.get(ctypes.get_errno(), str(ctypes.get_errno()))
"""

# Job A: leave a message for whoever comes next, each way there is, and say how each went.
LEAVE = (
    MQ_CALLS
    + """
import json
message = b'left by uid %d' % os.getuid()
tried = {}
try:
    fd = os.open('/dev/mqueue/left-by-open', os.O_CREAT | os.O_RDWR, 0o666)
    os.fchmod(fd, 0o666)
    tried['open'] = 'created'
    tried['send_on_open'] = call('mq_timedsend', fd, message, len(message), 0, None)[1]
except OSError as exc:
    tried['open'] = errno.errorcode[exc.errno]
fd, tried['mq_open'] = call('mq_open', b'left-by-mq-open', os.O_CREAT | os.O_RDWR, 0o666, None)
if fd >= 0:
    tried['send_on_mq_open'] = call('mq_timedsend', fd, message, len(message), 0, None)[1]
attr = ctypes.create_string_buffer(64)
tried['mq_timedsend'] = call('mq_timedsend', 0, message, len(message), 0, None)[1]
tried['mq_timedreceive'] = call('mq_timedreceive', 0, attr, 64, None, None)[1]
tried['mq_notify'] = call('mq_notify', 0, None)[1]
tried['mq_getsetattr'] = call('mq_getsetattr', 0, None, attr)[1]
tried['mq_unlink'] = call('mq_unlink', b'no-such-queue')[1]
print(json.dumps({'uid': os.getuid(), 'tried': tried, 'listed': os.listdir('/dev/mqueue')}))
"""
)

# Job B: read whatever is there, by path and by name.
READ = (
    MQ_CALLS
    + """
import json
got = []
def drain(fd):
    buf = ctypes.create_string_buffer(8192)
    while True:
        n, _ = call('mq_timedreceive', fd, buf, 8192, None, None)
        if n < 0:
            return
        got.append(buf.raw[:n].decode(errors='replace'))
try:
    listed = os.listdir('/dev/mqueue')
except OSError:
    listed = []
for name in listed:
    try:
        drain(os.open('/dev/mqueue/' + name, os.O_RDONLY | os.O_NONBLOCK))
    except OSError:
        pass
for name in (b'left-by-open', b'left-by-mq-open'):
    fd, _ = call('mq_open', name, os.O_RDONLY | os.O_NONBLOCK, 0, None)
    if fd >= 0:
        drain(fd)
print(json.dumps({'uid': os.getuid(), 'listed': listed, 'got': got}))
"""
)


class UnmaskedEngine(Engine):
    """An engine whose containers keep Docker's writable /dev/mqueue: what a container would be
    if the mask were lost, so that the fork server's own after-job check is what is tested."""

    masked = ()


def pooled(engine: Engine, mode: Mode) -> DockerBackend:
    return DockerBackend(engine, probe.RUNNER, None if mode == "cold" else PoolPolicy(mode=mode, size=1))


@pytest.fixture(params=["cold", "warm", "fork"])
def backend(request: pytest.FixtureRequest, docker_backend: DockerBackend) -> Iterator[DockerBackend]:
    made = pooled(docker_backend.engine, request.param)
    yield made
    made.close()


def output(outcome: Outcome) -> str:
    assert outcome.system_error is None, outcome.system_error
    text = outcome.result.decode()
    assert text.startswith("ready\n"), (text, outcome.log.decode(errors="replace"))
    return text[len("ready\n") :]


def facts(backend: DockerBackend, code: str) -> dict[str, object]:
    found: dict[str, object] = json.loads(output(backend.run(code.encode(), LIMITS)))
    return found


@pytest.mark.docker
@pytest.mark.slow
def test_a_job_can_write_only_its_own_folder(backend: DockerBackend) -> None:
    seen = facts(backend, WRITABLE)
    # /dev/mqueue is an empty read-only tmpfs over Docker's mqueue mount; there is no
    # /dev/shm (no IPC namespace of the host's); the root is read-only.
    assert seen["mqueue"] == ["tmpfs ro"]
    if backend.mode == "fork":
        # /tmp is the server's (0711): the job's own folder is all it may write.
        assert seen["writable"] == [seen["cwd"]]
        assert isinstance(seen["uid"], int) and seen["uid"] >= 1_000_000
    elif backend.mode == "warm":
        # One job per container: its /tmp goes with the container.
        assert seen["writable"] == ["/tmp", seen["cwd"]]
    else:
        assert seen["writable"] == ["/tmp"] and seen["cwd"] == "/tmp"


@pytest.mark.docker
@pytest.mark.slow
def test_a_message_queue_carries_nothing_to_the_next_job(backend: DockerBackend) -> None:
    left = facts(backend, LEAVE)
    read = facts(backend, READ)
    tried = left["tried"]
    assert isinstance(tried, dict)
    # Nothing can be made under /dev/mqueue, and nothing is there.
    assert tried["open"] == "EROFS", tried
    assert left["listed"] == [] and read["listed"] == []
    if backend.mode != "cold":
        # The job's filter refuses every mq_* call (a cold run has Docker's profile only; its
        # queues live in the container's own IPC namespace and go with it).
        mq_calls = ("mq_open", "mq_timedsend", "mq_timedreceive", "mq_notify", "mq_getsetattr", "mq_unlink")
        assert {name: tried[name] for name in mq_calls} == dict.fromkeys(mq_calls, "EPERM")
    if backend.mode == "fork":
        assert read["uid"] != left["uid"]
    # What the first job tried to leave never reaches the second.
    assert read["got"] == [], read


@pytest.mark.docker
@pytest.mark.slow
def test_a_fork_server_that_finds_a_leftover_retires_its_container(docker_backend: DockerBackend) -> None:
    # Without the mask, a job can still make a queue at /dev/mqueue with open(2) (its filter
    # refuses only the mq_* calls): the server must notice it after the job and retire the
    # container, so that the next job runs in a fresh one and finds nothing.
    engine = UnmaskedEngine(docker_backend.client, docker_backend.image)
    backend = pooled(engine, "fork")
    try:
        first = output(
            backend.run(
                (
                    WHERE
                    + "\nos = __import__('os')\nos.close(os.open('/dev/mqueue/left', os.O_CREAT | os.O_RDWR))"
                ).encode(),
                LIMITS,
            )
        )
        code = WHERE + "\nprint(__import__('os').listdir('/dev/mqueue'))"
        second = output(backend.run(code.encode(), LIMITS))
        assert second.split("\n")[0] != first.split("\n")[0], "the server kept serving after a leftover"
        assert second.split("\n")[1] == "[]"
        # A clean job leaves the server fit: the next one runs in the same container.
        third = output(backend.run(code.encode(), LIMITS))
        assert third == second
    finally:
        backend.close()
    assert backend.containers() == []


# -- the fork server's after-job check, on folders of this machine ------------------------------


def test_the_after_job_check_names_whatever_is_left(tmp_path: Path) -> None:
    work, mqueue, shm = (tmp_path / name for name in ("tmp", "mqueue", "shm"))
    for folder in (work, mqueue):
        folder.mkdir()
    ipc = tmp_path / "sysvipc-shm"
    ipc.write_text("       key      shmid perms                  size  cpid  lpid\n")

    def check() -> list[str]:
        return forkserver.leftovers(str(work), (str(mqueue), str(shm)), (str(ipc),))

    assert check() == []  # a missing place (no /dev/shm) is nothing left
    (work / ".hidden").write_text("x")
    (mqueue / "queue").write_text("")
    assert check() == [str(work / ".hidden"), str(mqueue / "queue")]
    os.remove(work / ".hidden")
    os.remove(mqueue / "queue")
    with ipc.open("a") as f:
        f.write("         0          3  1666                  4096    12    12\n")
    assert check() == [str(ipc)]
