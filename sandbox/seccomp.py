"""A seccomp filter for learner processes, built by hand as classic BPF (stdlib only).

It runs inside the sandbox image, which has no libseccomp binding, so the filter is a
short list of BPF instructions loaded with prctl(2). It is a deny list on top of Docker's
own default profile: the calls that would let learner code inspect or tamper with another
process (ptrace, process_vm_*), leave or build namespaces (unshare, setns, clone with a
CLONE_NEW* flag), make a sibling instead of a child (clone with CLONE_PARENT: the sibling
would be the server's child, a zombie it never expected), reach a network or a local
socket, change identity, leave System V IPC objects or POSIX message queues behind (or
use a queue's descriptor however it was opened), signal the server that runs them, or
reach kernel surfaces that judging never needs (bpf, perf, io_uring, keys, modules, mounts).

Denied calls fail with EPERM instead of killing the process, so a learner who calls one
gets a clear Python exception (a runtime error) rather than a silent death. clone3 fails
with ENOSYS: its flags live in memory the filter cannot read, and glibc then falls back
to clone, whose flags the filter does check. Calls of another architecture or of the x32
ABI kill the process: the numbers below would not mean the same calls there.
"""

from __future__ import annotations

import ctypes
import errno
import platform
import struct

from sandbox.errors import SandboxError

# BPF opcodes (linux/filter.h, linux/bpf_common.h)
_LD_W_ABS = 0x00 | 0x00 | 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ_K = 0x05 | 0x10 | 0x00  # BPF_JMP | BPF_JEQ | BPF_K
_JGE_K = 0x05 | 0x30 | 0x00  # BPF_JMP | BPF_JGE | BPF_K
_JSET_K = 0x05 | 0x40 | 0x00  # BPF_JMP | BPF_JSET | BPF_K
_RET_K = 0x06 | 0x00  # BPF_RET | BPF_K

SECCOMP_RET_KILL_PROCESS = 0x80000000
SECCOMP_RET_ERRNO = 0x00050000
SECCOMP_RET_ALLOW = 0x7FFF0000

PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2

# struct seccomp_data: int nr; __u32 arch; __u64 instruction_pointer; __u64 args[6]
_NR, _ARCH, _ARG0_LOW = 0, 4, 16

AUDIT_ARCH_X86_64 = 0xC000003E
AUDIT_ARCH_AARCH64 = 0xC00000B7
X32_SYSCALL_BIT = 0x40000000

# Every CLONE_NEW* flag: NEWTIME, NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET.
CLONE_NEW_FLAGS = 0x00000080 | 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000
CLONE_NEW_FLAGS |= 0x20000000 | 0x40000000
# CLONE_PARENT makes the new process a sibling of the caller, i.e. a child of the fork
# server: a job could leave zombies there that outlive it and use up the container's pids.
CLONE_PARENT = 0x00008000
CLONE_DENIED_FLAGS = CLONE_NEW_FLAGS | CLONE_PARENT

# Denied calls, by name. Names missing from an architecture's table below are skipped
# (aarch64 has no legacy calls such as iopl).
DENIED = (
    # other processes' memory and state
    "ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd",
    # namespaces and mounts
    "unshare", "setns", "mount", "umount2", "pivot_root", "chroot", "open_tree", "move_mount",
    "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr",
    # the network and local sockets (the container has no network; this also shuts Unix sockets)
    "socket", "connect", "bind", "listen", "accept", "accept4",
    # identity: the per-job user is final
    "setuid", "setgid", "setreuid", "setregid", "setresuid", "setresgid", "setgroups",
    "setfsuid", "setfsgid",
    # kernel surfaces judging never needs
    "bpf", "perf_event_open", "userfaultfd", "io_uring_setup", "io_uring_enter",
    "io_uring_register", "keyctl", "add_key", "request_key", "init_module", "finit_module",
    "delete_module", "kexec_load", "kexec_file_load", "reboot", "swapon", "swapoff", "acct",
    "settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "syslog", "quotactl",
    "open_by_handle_at", "name_to_handle_at", "personality", "vhangup", "iopl", "ioperm",
    "modify_ldt", "uselib", "lookup_dcookie", "fanotify_init", "move_pages", "migrate_pages",
    # System V IPC and POSIX message queues outlive a job: no channel to the next one. Every
    # mq_* call, not only mq_open: a queue's descriptor can come from open(2) on an mqueue
    # filesystem (sandbox.engine masks Docker's), and the calls on it must fail too.
    "shmget", "shmat", "shmctl", "semget", "semop", "semctl", "semtimedop", "msgget", "msgsnd",
    "msgrcv", "msgctl", "mq_open", "mq_unlink", "mq_timedsend", "mq_timedreceive", "mq_notify",
    "mq_getsetattr",
    # signals by file descriptor would get round the pid checks below
    "pidfd_open", "pidfd_send_signal",
)  # fmt: skip

SYSCALLS: dict[str, dict[str, int]] = {
    "x86_64": {
        "ptrace": 101, "process_vm_readv": 310, "process_vm_writev": 311, "kcmp": 312,
        "pidfd_getfd": 438, "unshare": 272, "setns": 308, "mount": 165, "umount2": 166,
        "pivot_root": 155, "chroot": 161, "open_tree": 428, "move_mount": 429, "fsopen": 430,
        "fsconfig": 431, "fsmount": 432, "fspick": 433, "mount_setattr": 442, "socket": 41,
        "connect": 42, "bind": 49, "listen": 50, "accept": 43, "accept4": 288, "setuid": 105,
        "setgid": 106, "setreuid": 113, "setregid": 114, "setresuid": 117, "setresgid": 119,
        "setgroups": 116, "setfsuid": 122, "setfsgid": 123, "bpf": 321, "perf_event_open": 298,
        "userfaultfd": 323, "io_uring_setup": 425, "io_uring_enter": 426,
        "io_uring_register": 427, "keyctl": 250, "add_key": 248, "request_key": 249,
        "init_module": 175, "finit_module": 313, "delete_module": 176, "kexec_load": 246,
        "kexec_file_load": 320, "reboot": 169, "swapon": 167, "swapoff": 168, "acct": 163,
        "settimeofday": 164, "clock_settime": 227, "clock_adjtime": 305, "adjtimex": 159,
        "syslog": 103, "quotactl": 179, "open_by_handle_at": 304, "name_to_handle_at": 303,
        "personality": 135, "vhangup": 153, "iopl": 172, "ioperm": 173, "modify_ldt": 154,
        "uselib": 134, "lookup_dcookie": 212, "fanotify_init": 300, "move_pages": 279,
        "migrate_pages": 256, "shmget": 29, "shmat": 30, "shmctl": 31, "semget": 64,
        "semop": 65, "semctl": 66, "semtimedop": 220, "msgget": 68, "msgsnd": 69, "msgrcv": 70,
        "msgctl": 71, "mq_open": 240, "mq_unlink": 241, "mq_timedsend": 242,
        "mq_timedreceive": 243, "mq_notify": 244, "mq_getsetattr": 245, "pidfd_open": 434,
        "pidfd_send_signal": 424,
        "clone": 56, "clone3": 435, "kill": 62, "tkill": 200, "tgkill": 234,
    },
    "aarch64": {
        "ptrace": 117, "process_vm_readv": 270, "process_vm_writev": 271, "kcmp": 272,
        "pidfd_getfd": 438, "unshare": 97, "setns": 268, "mount": 40, "umount2": 39,
        "pivot_root": 41, "chroot": 51, "open_tree": 428, "move_mount": 429, "fsopen": 430,
        "fsconfig": 431, "fsmount": 432, "fspick": 433, "mount_setattr": 442, "socket": 198,
        "connect": 203, "bind": 200, "listen": 201, "accept": 202, "accept4": 242,
        "setuid": 146, "setgid": 144, "setreuid": 145, "setregid": 143, "setresuid": 147,
        "setresgid": 149, "setgroups": 159, "setfsuid": 151, "setfsgid": 152, "bpf": 280,
        "perf_event_open": 241, "userfaultfd": 282, "io_uring_setup": 425,
        "io_uring_enter": 426, "io_uring_register": 427, "keyctl": 219, "add_key": 217,
        "request_key": 218, "init_module": 105, "finit_module": 273, "delete_module": 106,
        "kexec_load": 104, "kexec_file_load": 294, "reboot": 142, "swapon": 224,
        "swapoff": 225, "acct": 89, "settimeofday": 170, "clock_settime": 112,
        "clock_adjtime": 266, "adjtimex": 171, "syslog": 116, "quotactl": 60,
        "open_by_handle_at": 265, "name_to_handle_at": 264, "personality": 92, "vhangup": 58,
        "lookup_dcookie": 18, "fanotify_init": 262, "move_pages": 239, "migrate_pages": 238,
        "msgget": 186, "msgctl": 187, "msgrcv": 188, "msgsnd": 189, "semget": 190,
        "semctl": 191, "semtimedop": 192, "semop": 193, "shmget": 194, "shmctl": 195,
        "shmat": 196, "mq_open": 180, "mq_unlink": 181, "mq_timedsend": 182,
        "mq_timedreceive": 183, "mq_notify": 184, "mq_getsetattr": 185, "pidfd_open": 434,
        "pidfd_send_signal": 424,
        "clone": 220, "clone3": 435, "kill": 129, "tkill": 130, "tgkill": 131,
    },
}  # fmt: skip
ARCHES = {"x86_64": AUDIT_ARCH_X86_64, "aarch64": AUDIT_ARCH_AARCH64}


class SeccompUnavailable(SandboxError, OSError):
    """This kernel or architecture cannot take the filter; the caller must not run learner code."""


class _SockFilter(ctypes.Structure):
    _fields_ = [
        ("code", ctypes.c_ushort),
        ("jt", ctypes.c_ubyte),
        ("jf", ctypes.c_ubyte),
        ("k", ctypes.c_uint),
    ]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_SockFilter))]


def build_filter(
    machine: str | None = None, protected: tuple[int, ...] = ()
) -> list[tuple[int, int, int, int]]:
    """The program as (code, jt, jf, k) instructions, for `machine` (default: this one).

    Signals to the `protected` pids (the server that runs the job, as pid or process group)
    and to every process at once (pid -1) are refused: a job that shares the server's
    user (warm mode) could otherwise kill it.
    """
    machine = machine or platform.machine()
    if machine not in SYSCALLS:
        raise SeccompUnavailable(f"no seccomp table for {machine}")
    table = SYSCALLS[machine]
    denied = [table[name] for name in DENIED if name in table]
    deny = SECCOMP_RET_ERRNO | errno.EPERM
    prog: list[tuple[int, int, int, int]] = [
        (_LD_W_ABS, 0, 0, _ARCH),
        (_JEQ_K, 1, 0, ARCHES[machine]),
        (_RET_K, 0, 0, SECCOMP_RET_KILL_PROCESS),
        (_LD_W_ABS, 0, 0, _NR),
    ]
    if machine == "x86_64":
        prog += [(_JGE_K, 0, 1, X32_SYSCALL_BIT), (_RET_K, 0, 0, SECCOMP_RET_KILL_PROCESS)]
    # clone3 -> ENOSYS (glibc falls back to clone); clone with a namespace flag or
    # CLONE_PARENT -> EPERM.
    prog += [
        (_JEQ_K, 0, 1, table["clone3"]),
        (_RET_K, 0, 0, SECCOMP_RET_ERRNO | errno.ENOSYS),
        (_JEQ_K, 0, 4, table["clone"]),
        (_LD_W_ABS, 0, 0, _ARG0_LOW),
        (_JSET_K, 0, 1, CLONE_DENIED_FLAGS),
        (_RET_K, 0, 0, deny),
        (_RET_K, 0, 0, SECCOMP_RET_ALLOW),
    ]
    # kill, tkill, tgkill: refuse the protected targets. arg0 is an int (pid_t); its low
    # 32 bits compare against the two's complement of negative targets.
    targets = sorted({t & 0xFFFFFFFF for p in protected for t in (p, -p)} | {0xFFFFFFFF})
    for name in ("kill", "tkill", "tgkill"):
        skip = 1 + len(targets) + 2
        prog.append((_JEQ_K, 0, skip, table[name]))
        prog.append((_LD_W_ABS, 0, 0, _ARG0_LOW))
        for i, target in enumerate(targets):
            prog.append((_JEQ_K, len(targets) - i, 0, target))
        prog += [(_RET_K, 0, 0, SECCOMP_RET_ALLOW), (_RET_K, 0, 0, deny)]
    for nr in denied:
        prog += [(_JEQ_K, 0, 1, nr), (_RET_K, 0, 0, deny)]
    prog.append((_RET_K, 0, 0, SECCOMP_RET_ALLOW))
    return prog


class Prepared:
    """The filter built for the kernel, to be loaded later (a fork server's child builds it
    while it waits for its job, and loads it once the job came: the load is two calls)."""

    def __init__(self, machine: str | None = None, protected: tuple[int, ...] = ()) -> None:
        prog = build_filter(machine, protected)
        self._libc = ctypes.CDLL(None, use_errno=True)
        self._array = (_SockFilter * len(prog))(*(_SockFilter(*ins) for ins in prog))
        self._fprog = _SockFprog(len(prog), self._array)

    def load(self) -> None:
        """Set no_new_privs and load the filter into this process (inherited by its children).

        Raises SeccompUnavailable when the kernel refuses: the caller must then stop, since
        learner code must not run unfiltered in a mode that promises the filter.
        """
        if self._libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise SeccompUnavailable(f"prctl(NO_NEW_PRIVS) failed: errno {ctypes.get_errno()}")
        if self._libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(self._fprog), 0, 0) != 0:
            raise SeccompUnavailable(f"prctl(SECCOMP) failed: errno {ctypes.get_errno()}")


def install(machine: str | None = None, protected: tuple[int, ...] = ()) -> None:
    """Build the filter and load it into this process now (see Prepared.load)."""
    Prepared(machine, protected).load()


def encode(prog: list[tuple[int, int, int, int]]) -> bytes:
    """The program as the kernel reads it (for tests and for inspecting it with bpf tools)."""
    return b"".join(struct.pack("=HBBI", *ins) for ins in prog)
