"""The warm sandbox server: preload once, then run each job in a fresh forked child (stdlib only).

Runs inside a judge container as `python3 -m sandbox.forkserver --preload M:F --entry M:F
[--warm M:F] [--jobs N]`. It imports and calls the preload function (for the judge: import
torch and warm it up), says it is ready, and then serves requests from stdin (see
sandbox.wire). Each job runs in a child of its own, forked *before* the job arrives (for
the first job before the server says it is ready, for each next one as soon as the last
one's report is sent), which sets itself up while nothing of any job exists:

- its own session, stdin from a private memfd the job will be copied into, stdout/stderr
  to pipes the server reads (so job code never writes the server's own stream), every
  other descriptor closed but the pipe on which the job's limits will come; no core dumps;
- the warm function, if any: trusted, job-independent work whose memory writes (the
  copy-on-write faults of a forked child) are then paid before the job, not during it;

and then it waits, as the server's user. When the job comes, the server copies its
payload into the memfd and sends its limits, and the child, before any job code:

- sets its rlimits: CPU time, address space, file size, processes, open files;
- when the server runs as root (fork mode): drops its supplementary groups and becomes a
  user and group of its own for this job (a uid no other job had), which cannot be undone;
- enters a fresh working folder in /tmp (made for it before the fork), the job's alone;
- sets no_new_privs and loads the seccomp filter of sandbox.seccomp;

and calls the entry function. The server enforces the job's start-up and wall clocks
and output caps, waits for the child, and then kills every process of the job: as root,
a helper that becomes the job's uid kills everything that uid owns (so a process that
left the session is found too); otherwise the child's process group. It removes the
working folder, reports how the job ended, and says whether it is still fit to serve.

It is unfit (it reports so and exits) after its N jobs, or after anything unusual: a
process of the job survived, the folder could not be removed, the child was killed by a
signal the server did not send (the kernel's OOM killer), anything left in a place a job
can write (see leftovers), or its own error. The host then discards the container.

No job's data stays in the server's memory for the next job to find in its forked copy:
the payload goes from stdin to a memfd, and the job's output to stdout, through one
buffer that is zeroed after every job; nothing of either is ever a Python object here.
A child is forked after the previous job was reported and the buffer zeroed, and before
the next job's payload is read: it holds no job's data until its own arrives.

Forking a process with torch loaded is mostly copying, and at exit tearing down, the page
tables of its private memory: a server that serves many jobs asks the kernel once, after
the preload, to back that memory with huge pages (sandbox.hugepages), which makes both
several times cheaper. It also freezes its objects for the garbage collector, so that a
child's collection neither walks nor writes (copies) the server's objects.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import importlib
import json
import math
import os
import resource
import select
import shutil
import signal
import sys
import time
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from judge.core.children import run_and_leave, wait_for_limits
from sandbox import hugepages, seccomp, wire

CHUNK = 1 << 16
# The first uid of per-job users in fork mode; job k of a container runs as UID_BASE + k.
UID_BASE = 200_000
WORK_ROOT = "/tmp"
# Headroom in the address space beyond what the preloaded server maps plus the job's budget.
ADDRESS_SLACK = 256 * 1024 * 1024
# How long to wait for the job's last writers to go after they were killed.
DRAIN_S = 2.0
EXIT_CHILD_SETUP = 71
# In a waiting child: the pipe on which the job's limits arrive.
GO_FD = 3
# Besides a job's own folder, the places its uid could write that outlive it, as found from
# inside jobs (tests/sandbox/test_writable_places.py walks a container for them): /dev/mqueue
# (sandbox.engine covers it with an empty read-only mount; queues made there with open(2)
# carried data to the next job) and /dev/shm (absent: containers get no IPC of the host's).
# Each must be empty between jobs; so must the work root, where only the server makes
# folders, and the container's System V IPC tables (the filter refuses those calls). They
# are checked whatever the mounts and the filter say, in case either is ever lost.
SHARED_PLACES = ("/dev/mqueue", "/dev/shm")
SYSV_IPC = ("/proc/sysvipc/shm", "/proc/sysvipc/sem", "/proc/sysvipc/msg")


def _resolve(spec: str) -> Callable[[], Any]:
    module, _, name = spec.partition(":")
    fn: Callable[[], Any] = getattr(importlib.import_module(module), name)
    return fn


def _vm_size() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0


@dataclass
class Child:
    """A forked, set-up child waiting for its job, as the server holds it."""

    pid: int
    pidfd: int
    uid: int
    workdir: str
    payload_fd: int  # the server's handle on the memfd that is the child's stdin
    go_w: int  # the job's limits go here; closed unsent, it tells the child to leave
    result_r: int
    log_r: int


class Server:
    def __init__(
        self,
        entry: Callable[[], Any],
        jobs: int,
        uid_base: int = UID_BASE,
        warm: Callable[[], Iterable[object] | None] | None = None,
    ) -> None:
        self.entry = entry
        self.warm = warm
        self.jobs = jobs
        self.uid_base = uid_base
        self.privileged = os.geteuid() == 0
        # Reused for every byte of job data; zeroed after each job.
        self.buffer = bytearray(wire.MAX_ENVELOPE_BYTES)
        self.view = memoryview(self.buffer)
        self.waiting: Child | None = None

    # -- the stream to the host ---------------------------------------------------------

    def send(self, tag: bytes, payload: bytes | memoryview) -> None:
        _write_all(1, [wire.envelope_head(tag, len(payload)), payload])

    def send_json(self, tag: bytes, value: dict[str, Any]) -> None:
        self.send(tag, json.dumps(value).encode())

    def _read_exact(self, n: int) -> bytes:
        parts, got = [], 0
        while got < n:
            chunk = os.read(0, min(n - got, CHUNK))
            if not chunk:
                break
            parts.append(chunk)
            got += len(chunk)
        return b"".join(parts)

    def _read_payload_into(self, fd: int, n: int) -> int:
        """Copy n bytes of stdin into `fd` through the zeroed buffer. Returns the bytes copied."""
        copied = 0
        while copied < n:
            got = os.readv(0, [self.view[: min(n - copied, len(self.buffer))]])
            if not got:
                break
            _write_all(fd, [self.view[:got]])
            copied += got
        return copied

    # -- serving ------------------------------------------------------------------------

    def serve(self) -> int:
        if self.privileged:
            # Jobs may write only in their own folders. (Docker copies the image's /tmp mode,
            # 1777, onto the tmpfs whatever its options say; the server owns it, so it sets it.)
            os.chmod(WORK_ROOT, 0o711)
        self.waiting = self._fork_ahead(0)
        self.send_json(wire.READY, {"pid": os.getpid(), "privileged": self.privileged, "jobs": self.jobs})
        for serial in range(self.jobs):
            request = wire.read_request_head(self._read_exact)
            if request is None:
                return 0
            header, length = request
            try:
                # A child that could not be forked ahead is forked now (and fails the same way).
                child = self.waiting if self.waiting is not None else self._spawn(serial)
                self.waiting = None
                end = self.run_job(header, length, child)
            except OSError as exc:
                # The job could not be started (no process or file to spare, say): say so
                # instead of dying, so the host knows this is the sandbox's fault, not the job's.
                end = {"error": f"the fork server could not run the job: {exc}", "fit": False}
            finally:
                self.buffer[:] = bytes(len(self.buffer))
            end["fit"] = end.get("fit", True) and serial + 1 < self.jobs
            if end["fit"]:
                # Only when another job would come here: a fraction of a millisecond on the
                # verdict's path. (The next job's folder is made after this report.)
                left = leftovers()
                if left:
                    end["fit"] = False
                    end["left"] = left[:10]
            self.send_json(wire.END, end)
            if not end["fit"]:
                return 0
            # The next job's child: forked and set up while the host reads this job's results.
            self.waiting = self._fork_ahead(serial + 1)
        return 0

    def _fork_ahead(self, serial: int) -> Child | None:
        """A waiting child for job `serial`, or None when none can be had now (no process or
        file to spare): the job then forks its own when it comes, and reports that failure."""
        try:
            return self._spawn(serial)
        except OSError:
            return None

    def _spawn(self, serial: int) -> Child:
        """Fork the child of job `serial`; it sets itself up and waits for the job's limits."""
        uid = self.uid_base + serial if self.privileged else os.getuid()
        workdir = self._make_workdir(serial, uid)
        fds: list[int] = []
        try:
            fds.append(os.memfd_create("job", os.MFD_CLOEXEC))
            for _ in range(3):
                fds.extend(os.pipe())
            pid = os.fork()
        except OSError:
            for fd in fds:
                os.close(fd)
            with contextlib.suppress(OSError):
                os.rmdir(workdir)
            raise
        payload_fd, go_r, go_w, result_r, result_w, log_r, log_w = fds
        if pid == 0:  # the child: never returns
            self._child(payload_fd, go_r, result_w, log_w, workdir, uid)
        for fd in (go_r, result_w, log_w):
            os.close(fd)
        return Child(pid, os.pidfd_open(pid), uid, workdir, payload_fd, go_w, result_r, log_r)

    def _hand_over(self, child: Child, limits: dict[str, Any], length: int) -> None:
        """Give the waiting child its job: the payload into its stdin, then its limits."""
        try:
            if self._read_payload_into(child.payload_fd, length) != length:
                raise wire.WireError("input ended inside a request")
            # The child's stdin is the same open file: it reads from where this points.
            os.lseek(child.payload_fd, 0, os.SEEK_SET)
        finally:
            os.close(child.payload_fd)
        go = {
            "cpu_s": float(limits["cpu_s"]),
            "address_space": _vm_size() + int(limits["memory_bytes"]) + ADDRESS_SLACK,
            "file_bytes": int(limits["file_bytes"]),
            "open_files": int(limits["open_files"]),
            "processes": int(limits["processes"]),
        }
        try:
            # A child that died while it waited (its set-up failed) has closed its end: its
            # exit status and log then say what happened.
            with contextlib.suppress(OSError):
                _write_all(child.go_w, [json.dumps(go).encode()])
        finally:
            os.close(child.go_w)

    def run_job(self, limits: dict[str, Any], length: int, child: Child) -> dict[str, Any]:
        start = time.monotonic()
        pid, pidfd, uid, workdir = child.pid, child.pidfd, child.uid, child.workdir
        result_r, log_r = child.result_r, child.log_r
        try:
            self._hand_over(child, limits, length)
        except BaseException:
            self._kill_job(pid, uid, workdir=None)
            raise
        caps = {result_r: int(limits["result_bytes"]), log_r: int(limits["log_bytes"])}
        sent = {result_r: 0, log_r: 0}
        tags = {result_r: wire.RESULT, log_r: wire.LOG}
        flags = {"timed_out": False, "result_overflow": False, "log_overflow": False}
        ready_s: float | None = None
        deadline = start + float(limits["startup_s"])
        open_fds = [result_r, log_r]
        child_done = False
        # Until the child exits (its pipes may close earlier: a job can close its own stdout).
        while not child_done:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                flags["timed_out"] = True
                break
            readable, _, _ = select.select([*open_fds, pidfd], [], [], remaining)
            for fd in readable:
                if fd == pidfd:
                    child_done = True
                    continue
                got = self._relay(fd, tags[fd], caps[fd], sent)
                if got == 0:
                    open_fds.remove(fd)
                    continue
                if fd == result_r and ready_s is None:
                    ready_s = time.monotonic() - start
                    deadline = time.monotonic() + float(limits["wall_s"])
                if sent[fd] > caps[fd]:
                    flags["result_overflow" if fd == result_r else "log_overflow"] = True
            if flags["result_overflow"] or flags["log_overflow"]:
                break
        killed = not child_done
        if killed:
            self._kill_job(pid, uid, workdir=None)
        _, status, usage = os.wait4(pid, 0)
        os.close(pidfd)
        clean = self._kill_job(pid, uid, workdir)
        # Processes the job made our children (clone with CLONE_PARENT, which the filter
        # refuses; this is the second line) are zombies now that the kill is done: reap them,
        # and retire a container in which a job left anything at all.
        clean = self._settle() and clean
        # Whatever is still in the pipes: everything that could write them is dead now.
        drained = self._drain(open_fds, tags, caps, sent, flags, result_r)
        for fd in (result_r, log_r):
            os.close(fd)
        if flags["result_overflow"] or flags["log_overflow"]:
            flags["timed_out"] = False
        code = os.waitstatus_to_exitcode(status)
        sig = -code if code < 0 else None
        cpu = usage.ru_utime + usage.ru_stime
        cpu_limit = math.ceil(float(limits["cpu_s"]))
        cpu_exceeded = sig == signal.SIGXCPU or (sig == signal.SIGKILL and not killed and cpu >= cpu_limit)
        # A SIGKILL we did not send: the cgroup's OOM killer (the child asked to go first).
        oom = sig == signal.SIGKILL and not killed and not cpu_exceeded
        return {
            "exit_code": None if sig else code,
            "signal": sig,
            "wall_s": time.monotonic() - start,
            "ready_s": ready_s,
            "cpu_s": cpu,
            "peak_memory_bytes": usage.ru_maxrss * 1024,
            **flags,
            "cpu_exceeded": cpu_exceeded,
            "memory_exceeded": oom,
            "setup_failed": code == EXIT_CHILD_SETUP and ready_s is None,
            "uid": uid,
            "fit": clean and drained and not oom,
        }

    def _relay(self, fd: int, tag: bytes, cap: int, sent: dict[int, int]) -> int:
        """Forward what `fd` has (up to its cap) as one envelope. Returns the bytes read."""
        got = os.readv(fd, [self.view[:CHUNK]])
        if got:
            room = max(cap - sent[fd], 0)
            if room:
                self.send(tag, self.view[: min(got, room)])
            sent[fd] += got
        return got

    def _drain(
        self,
        open_fds: list[int],
        tags: dict[int, bytes],
        caps: dict[int, int],
        sent: dict[int, int],
        flags: dict[str, bool],
        result_r: int,
    ) -> bool:
        give_up = time.monotonic() + DRAIN_S
        while open_fds:
            remaining = give_up - time.monotonic()
            if remaining <= 0:
                return False
            readable, _, _ = select.select(open_fds, [], [], remaining)
            for fd in readable:
                if self._relay(fd, tags[fd], caps[fd], sent) == 0:
                    open_fds.remove(fd)
                elif sent[fd] > caps[fd]:
                    flags["result_overflow" if fd == result_r else "log_overflow"] = True
        return True

    # -- the job's folder and processes ---------------------------------------------------

    def _make_workdir(self, serial: int, uid: int) -> str:
        path = os.path.join(WORK_ROOT, f"job-{serial}")
        os.mkdir(path, 0o700)
        if self.privileged:
            os.chown(path, uid, uid)
        return path

    def _kill_job(self, pid: int, uid: int, workdir: str | None) -> bool:
        """Kill every process of the job and remove its folder. True when both are done."""
        if not self.privileged:
            # One job per container here: the host discards the container after it, and
            # with it anything that left the group.
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)
            if workdir is not None:
                shutil.rmtree(workdir, ignore_errors=True)
                return not os.path.exists(workdir)
            return True
        if workdir is not None and not _live_pids_of(uid, exclude=os.getpid()):
            # The usual end: nothing of the job is left (no process of its uid can appear
            # now, since only such a process could start one) and it wrote no files.
            with contextlib.suppress(OSError):
                os.rmdir(workdir)
            if not os.path.exists(workdir):
                return True
        try:
            helper = os.fork()
        except OSError:
            # No process to spare (the job used up the container's pids): kill what we can
            # as root, and have the container replaced.
            _kill_pids(_live_pids_of(uid, exclude=os.getpid()))
            return False
        if helper == 0:
            os._exit(_kill_as(uid, workdir))
        _, status, _ = os.wait4(helper, 0)
        ok = os.waitstatus_to_exitcode(status) == 0
        if workdir is not None:
            with contextlib.suppress(OSError):
                os.rmdir(workdir)
            ok = ok and not os.path.exists(workdir)
        return ok

    def _settle(self) -> bool:
        """Reap every child left, then wait for the container to hold nothing but its init
        and this server. True when that happened and no child of ours had to be reaped."""
        strays = 0
        give_up = time.monotonic() + DRAIN_S
        while True:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                pid = 0
            if pid:
                strays += 1
                continue
            if not _other_pids():
                return strays == 0
            if time.monotonic() > give_up:
                return False
            time.sleep(0.005)

    # -- the child --------------------------------------------------------------------------

    def _child(self, payload_fd: int, go_r: int, result_w: int, log_w: int, workdir: str, uid: int) -> None:
        server = os.getppid()
        protected = (server, os.getpgid(server), 1)  # the server, its group, the container's init
        try:
            os.setsid()
            os.dup2(payload_fd, 0, inheritable=True)
            os.dup2(result_w, 1, inheritable=True)
            os.dup2(log_w, 2, inheritable=True)
            os.dup2(go_r, GO_FD, inheritable=False)
            os.closerange(GO_FD + 1, 1 << 20)
            # Fresh stream objects: the server's own may hold buffered bytes.
            sys.stdin = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115
            sys.stdout = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
            sys.stderr = open(2, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
            # The OOM killer takes the job first. A non-dumpable process's /proc files belong
            # to root, so the flag is lifted for this write and set again before job code.
            _set_dumpable(True)
            with open("/proc/self/oom_score_adj", "w") as f:
                f.write("1000")
            _set_dumpable(False)
            for key in ("HOME", "TMPDIR"):
                os.environ[key] = workdir
            import tempfile

            tempfile.tempdir = None
            sys.path[:] = [p for p in sys.path if p and not p.startswith(WORK_ROOT)]
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
            seccomp_filter = seccomp.Prepared(protected=protected)
            if self.warm is not None:
                # In steps, stopping as soon as the job is here: when jobs come back to back,
                # the rest of the warming would only delay the job it is meant to speed up.
                for _ in self.warm() or ():
                    if select.select([GO_FD], [], [], 0)[0]:
                        break
            # Until its job comes the child is the server's user, like the server's own
            # work: no process runs as a job's uid but the job's own (and the next one's
            # uid has no process until its job starts).
            limits = wait_for_limits(GO_FD)
            if limits is None:  # the server is gone or let this child go
                os._exit(0)
            _set_limits(limits, self.privileged)
            if self.privileged:
                os.setgroups([])
                os.setresgid(uid, uid, uid)
                os.setresuid(uid, uid, uid)
            os.chdir(workdir)  # as the job's user: the folder is its alone
            seccomp_filter.load()
        except BaseException:
            with contextlib.suppress(Exception):
                os.write(2, ("sandbox setup failed:\n" + traceback.format_exc()).encode())
            os._exit(EXIT_CHILD_SETUP)
        run_and_leave(self.entry)


def _set_limits(limits: dict[str, Any], privileged: bool) -> None:
    """The job's rlimits, set by the child itself: only lowered, which needs no privilege."""
    # As in a cold run, the limit counts the process's whole CPU time, its set-up included
    # (a few milliseconds here, against a budget of start-up plus run time).
    cpu = math.ceil(float(limits["cpu_s"]))
    address_space = int(limits["address_space"])
    rlimits = [
        (resource.RLIMIT_CPU, (cpu, cpu + 1)),
        (resource.RLIMIT_AS, (address_space, address_space)),
        (resource.RLIMIT_FSIZE, (int(limits["file_bytes"]),) * 2),
        (resource.RLIMIT_NOFILE, (int(limits["open_files"]),) * 2),
    ]
    if privileged:
        # Counted per uid across the host, so only meaningful for a uid of the job's own; as
        # the shared sandbox user the container's pids limit does this.
        processes = int(limits["processes"])
        rlimits.append((resource.RLIMIT_NPROC, (processes, processes)))
    for which, value in rlimits:
        resource.setrlimit(which, value)


def _kill_as(uid: int, workdir: str | None) -> int:
    """In a helper process: become `uid`, kill all its processes, remove `workdir`. 0 if clean."""
    try:
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
        me = os.getpid()
        for _ in range(100):
            # kill(-1) reaches every process this uid may signal, except the caller; the
            # kernel blocks forks while it walks the list, so nothing slips through.
            with contextlib.suppress(ProcessLookupError):
                os.kill(-1, signal.SIGKILL)
            if not _live_pids_of(uid, exclude=me):
                break
            time.sleep(0.005)
        else:
            return 1
        if workdir is not None:
            _remove_tree(workdir)
        return 0
    except BaseException:
        return 2


def leftovers(
    work_root: str = WORK_ROOT,
    places: tuple[str, ...] = SHARED_PLACES,
    ipc_tables: tuple[str, ...] = SYSV_IPC,
) -> list[str]:
    """What is left where a job could have written, between jobs (every job's folder is gone
    by then): entries of the work root and of `places`, and System V IPC tables with a row.
    A place that does not exist holds nothing; one that cannot be read counts as a leftover."""
    left: list[str] = []
    for place in (work_root, *places):
        try:
            left += [os.path.join(place, name) for name in sorted(os.listdir(place))]
        except FileNotFoundError:
            continue
        except OSError as exc:
            left.append(f"{place} ({exc.strerror})")
    for table in ipc_tables:
        try:
            with open(table) as f:
                rows = f.read().splitlines()[1:]  # below the header line
        except FileNotFoundError:
            continue
        except OSError as exc:
            rows = [str(exc.strerror)]
        if any(row.strip() for row in rows):
            left.append(table)
    return left


def _kill_pids(pids: list[int]) -> None:
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def _other_pids() -> list[int]:
    """Processes of this container besides its init and this server (zombies included)."""
    me = os.getpid()
    return [int(e) for e in os.listdir("/proc") if e.isdigit() and int(e) not in (1, me)]


def _remove_tree(path: str) -> None:
    """Remove what is inside `path` (the job's own files; it may have made them read-only)."""

    def retry(fn: Callable[..., Any], target: str, _exc: Any) -> None:
        with contextlib.suppress(OSError):
            os.chmod(os.path.dirname(target), 0o700)
            os.chmod(target, 0o700)
        fn(target)

    for name in os.listdir(path):
        full = os.path.join(path, name)
        if os.path.isdir(full) and not os.path.islink(full):
            shutil.rmtree(full, onerror=retry)
        else:
            os.unlink(full)


def _live_pids_of(uid: int, exclude: int) -> list[int]:
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == exclude:
            continue
        try:
            with open(f"/proc/{entry}/status") as f:
                status = f.read()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        zombie = fields.get("State", "").strip().startswith("Z")
        if int(fields.get("Uid", "-1 ").split()[0]) == uid and not zombie:
            pids.append(int(entry))
    return pids


def _set_dumpable(on: bool) -> None:
    import ctypes

    if ctypes.CDLL(None, use_errno=True).prctl(4, int(on), 0, 0, 0) != 0:  # PR_SET_DUMPABLE
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_DUMPABLE) failed")


def _write_all(fd: int, parts: list[bytes | memoryview]) -> None:
    pending = [memoryview(p) for p in parts if len(p)]
    while pending:
        written = os.writev(fd, pending)
        while written and pending:
            if written >= len(pending[0]):
                written -= len(pending[0])
                pending.pop(0)
            else:
                pending[0] = pending[0][written:]
                written = 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m sandbox.forkserver")
    parser.add_argument("--preload", required=True, help="module:function run once, before serving")
    parser.add_argument("--entry", required=True, help="module:function run in each job's child")
    parser.add_argument(
        "--warm", help="module:function run in each child before its job comes (trusted, job-independent)"
    )
    parser.add_argument("--jobs", type=int, default=1, help="jobs to serve before exiting")
    parser.add_argument("--uid-base", type=int, default=UID_BASE, help="job k runs as uid-base + k (as root)")
    args = parser.parse_args(argv)
    # Our own output goes to the host only as envelopes; a stray print must not corrupt them.
    sys.stdout = sys.stderr
    # Not dumpable: a job running as the same user (warm mode) cannot ptrace this process or
    # open its memory through /proc. Jobs inherit the flag, which protects them the same way.
    _set_dumpable(False)
    _resolve(args.preload)()
    jobs = max(args.jobs, 1)
    # Everything preloaded lives as long as the server: the collector need not look at it
    # again, in the server or (which would copy every page it touches) in a child.
    gc.collect()
    gc.freeze()
    if jobs > 1:  # a second or so, worth it over many forks, not for one
        hugepages.collapse()
    warm = _resolve(args.warm) if args.warm else None
    server = Server(_resolve(args.entry), jobs, args.uid_base, warm)
    try:
        return server.serve()
    except wire.WireError as exc:
        sys.stderr.write(f"forkserver: {exc}\n")
        return 2


if __name__ == "__main__":
    code = main()
    with contextlib.suppress(Exception):
        sys.stderr.flush()
    os._exit(code)
