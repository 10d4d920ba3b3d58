"""The warm sandbox server: preload once, then run each job in a fresh forked child (stdlib only).

Runs inside a judge container as `python3 -m sandbox.forkserver --preload M:F --entry M:F
[--jobs N]`. It imports and calls the preload function (for the judge: import torch and warm
it up), says it is ready, and then serves requests from stdin (see sandbox.wire). For each
job it forks a child that sets itself up before any job code runs:

- its own session, stdin from a private copy of the job, stdout/stderr to pipes the server
  reads (so job code never writes the server's own stream), every other descriptor closed;
- a fresh working folder in /tmp, readable by the job alone;
- rlimits: CPU time, address space, file size, processes, open files, no core dumps;
- when the server runs as root (fork mode): no supplementary groups and a user and group
  of its own for this job (a uid no other job had), which cannot be undone;
- no_new_privs and the seccomp filter of sandbox.seccomp;

and then calls the entry function. The server enforces the job's start-up and wall clocks
and output caps, waits for the child, and then kills every process of the job: as root,
a helper that becomes the job's uid kills everything that uid owns (so a process that
left the session is found too); otherwise the child's process group. It removes the
working folder, reports how the job ended, and says whether it is still fit to serve.

It is unfit (it reports so and exits) after its N jobs, or after anything unusual: a
process of the job survived, the folder could not be removed, the child was killed by a
signal the server did not send (the kernel's OOM killer), or its own error. The host
then discards the container.

No job's data stays in the server's memory for the next job to find in its forked copy:
the payload goes from stdin to a memfd, and the job's output to stdout, through one
buffer that is zeroed after every job; nothing of either is ever a Python object here.
"""

from __future__ import annotations

import argparse
import contextlib
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
from collections.abc import Callable
from typing import Any

from sandbox import seccomp, wire

CHUNK = 1 << 16
# The first uid of per-job users in fork mode; job k of a container runs as UID_BASE + k.
UID_BASE = 200_000
WORK_ROOT = "/tmp"
# Headroom in the address space beyond what the preloaded server maps plus the job's budget.
ADDRESS_SLACK = 256 * 1024 * 1024
# How long to wait for the job's last writers to go after they were killed.
DRAIN_S = 2.0
EXIT_CHILD_SETUP = 71


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


class Server:
    def __init__(self, entry: Callable[[], Any], jobs: int, uid_base: int = UID_BASE) -> None:
        self.entry = entry
        self.jobs = jobs
        self.uid_base = uid_base
        self.privileged = os.geteuid() == 0
        # Reused for every byte of job data; zeroed after each job.
        self.buffer = bytearray(wire.MAX_ENVELOPE_BYTES)
        self.view = memoryview(self.buffer)

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

    def read_request(self) -> tuple[dict[str, Any], int] | None:
        """The next request's header and a memfd holding its payload; None at end of input."""
        request = wire.read_request_head(self._read_exact)
        if request is None:
            return None
        header, length = request
        fd = os.memfd_create("job", os.MFD_CLOEXEC)
        if self._read_payload_into(fd, length) != length:
            os.close(fd)
            raise wire.WireError("input ended inside a request")
        os.lseek(fd, 0, os.SEEK_SET)
        return header, fd

    # -- serving ------------------------------------------------------------------------

    def serve(self) -> int:
        if self.privileged:
            # Jobs may write only in their own folders. (Docker copies the image's /tmp mode,
            # 1777, onto the tmpfs whatever its options say; the server owns it, so it sets it.)
            os.chmod(WORK_ROOT, 0o711)
        self.send_json(wire.READY, {"pid": os.getpid(), "privileged": self.privileged, "jobs": self.jobs})
        for serial in range(self.jobs):
            request = self.read_request()
            if request is None:
                return 0
            header, payload_fd = request
            try:
                end = self.run_job(header, payload_fd, serial)
            except OSError as exc:
                # The job could not be started (no process or file to spare, say): say so
                # instead of dying, so the host knows this is the sandbox's fault, not the job's.
                end = {"error": f"the fork server could not run the job: {exc}", "fit": False}
            finally:
                self.buffer[:] = bytes(len(self.buffer))
            end["fit"] = end.get("fit", True) and serial + 1 < self.jobs
            self.send_json(wire.END, end)
            if not end["fit"]:
                return 0
        return 0

    def run_job(self, limits: dict[str, Any], payload_fd: int, serial: int) -> dict[str, Any]:
        start = time.monotonic()
        uid = self.uid_base + serial if self.privileged else os.getuid()
        workdir = self._make_workdir(serial, uid)
        result_r, result_w = os.pipe()
        log_r, log_w = os.pipe()
        address_space = _vm_size() + int(limits["memory_bytes"]) + ADDRESS_SLACK
        pid = os.fork()
        if pid == 0:  # the child: never returns
            self._child(limits, payload_fd, result_w, log_w, workdir, uid, address_space)
        for fd in (payload_fd, result_w, log_w):
            os.close(fd)
        pidfd = os.pidfd_open(pid)
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

    def _child(
        self,
        limits: dict[str, Any],
        payload_fd: int,
        result_w: int,
        log_w: int,
        workdir: str,
        uid: int,
        address_space: int,
    ) -> None:
        server = os.getppid()
        protected = (server, os.getpgid(server), 1)  # the server, its group, the container's init
        try:
            os.setsid()
            os.dup2(payload_fd, 0, inheritable=True)
            os.dup2(result_w, 1, inheritable=True)
            os.dup2(log_w, 2, inheritable=True)
            os.closerange(3, 1 << 20)
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
            cpu = math.ceil(float(limits["cpu_s"]))
            rlimits = [
                (resource.RLIMIT_CPU, (cpu, cpu + 1)),
                (resource.RLIMIT_AS, (address_space, address_space)),
                (resource.RLIMIT_FSIZE, (int(limits["file_bytes"]),) * 2),
                (resource.RLIMIT_CORE, (0, 0)),
                (resource.RLIMIT_NOFILE, (int(limits["open_files"]),) * 2),
            ]
            if self.privileged:
                # Counted per uid across the host, so only meaningful for a uid of the job's
                # own; as the shared sandbox user the container's pids limit does this.
                processes = int(limits["processes"])
                rlimits.append((resource.RLIMIT_NPROC, (processes, processes)))
            for which, value in rlimits:
                resource.setrlimit(which, value)
            if self.privileged:
                os.setgroups([])
                os.setresgid(uid, uid, uid)
                os.setresuid(uid, uid, uid)
            os.chdir(workdir)  # as the job's user: the folder is its alone
            seccomp.install(protected=protected)
        except BaseException:
            with contextlib.suppress(Exception):
                os.write(2, ("sandbox setup failed:\n" + traceback.format_exc()).encode())
            os._exit(EXIT_CHILD_SETUP)
        code = 1
        try:
            code = int(self.entry() or 0)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        except BaseException:
            with contextlib.suppress(Exception):
                traceback.print_exc()
        finally:
            for stream in (sys.stdout, sys.stderr):
                with contextlib.suppress(Exception):
                    stream.flush()
            os._exit(code)


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
    parser.add_argument("--jobs", type=int, default=1, help="jobs to serve before exiting")
    parser.add_argument("--uid-base", type=int, default=UID_BASE, help="job k runs as uid-base + k (as root)")
    args = parser.parse_args(argv)
    # Our own output goes to the host only as envelopes; a stray print must not corrupt them.
    sys.stdout = sys.stderr
    # Not dumpable: a job running as the same user (warm mode) cannot ptrace this process or
    # open its memory through /proc. Jobs inherit the flag, which protects them the same way.
    _set_dumpable(False)
    _resolve(args.preload)()
    server = Server(_resolve(args.entry), max(args.jobs, 1), args.uid_base)
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
