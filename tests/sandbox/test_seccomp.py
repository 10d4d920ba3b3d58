"""The seccomp program itself, run by a small classic-BPF interpreter for each architecture.

Jobs in Docker check the filter on this machine's architecture; this checks what the
program answers on both tables, including aarch64, which no test here can run natively.
The numbers are the kernel's (arch/x86/entry/syscalls/syscall_64.tbl and
include/uapi/asm-generic/unistd.h), written here independently of sandbox.seccomp's tables.
"""

from __future__ import annotations

import errno
import struct

import pytest

from sandbox import seccomp

MQ_CALLS = {
    "x86_64": {
        "mq_open": 240,
        "mq_unlink": 241,
        "mq_timedsend": 242,
        "mq_timedreceive": 243,
        "mq_notify": 244,
        "mq_getsetattr": 245,
    },
    "aarch64": {
        "mq_open": 180,
        "mq_unlink": 181,
        "mq_timedsend": 182,
        "mq_timedreceive": 183,
        "mq_notify": 184,
        "mq_getsetattr": 185,
    },
}
# Calls every job makes, which the filter must let through: read, write, openat, mmap.
ALLOWED = {"x86_64": (0, 1, 257, 9), "aarch64": (63, 64, 56, 222)}
EPERM = seccomp.SECCOMP_RET_ERRNO | errno.EPERM


def run(prog: list[tuple[int, int, int, int]], machine: str, nr: int, arg0: int = 0) -> int:
    """What the kernel would do with the call: the program's return value."""
    data = struct.pack("=iIQ6Q", nr, seccomp.ARCHES[machine], 0, arg0, 0, 0, 0, 0, 0)
    acc, pc = 0, 0
    while True:
        code, jt, jf, k = prog[pc]
        if code == seccomp._LD_W_ABS:
            acc = struct.unpack_from("=I", data, k)[0]
        elif code == seccomp._RET_K:
            return k
        elif code in (seccomp._JEQ_K, seccomp._JGE_K, seccomp._JSET_K):
            taken = {
                seccomp._JEQ_K: acc == k,
                seccomp._JGE_K: acc >= k,
                seccomp._JSET_K: bool(acc & k),
            }[code]
            pc += jt if taken else jf
        else:
            raise AssertionError(f"unexpected instruction {code:#x}")
        pc += 1


@pytest.mark.parametrize("machine", sorted(MQ_CALLS))
def test_every_message_queue_call_is_refused(machine: str) -> None:
    prog = seccomp.build_filter(machine)
    refused = {name: run(prog, machine, nr) for name, nr in MQ_CALLS[machine].items()}
    assert refused == dict.fromkeys(MQ_CALLS[machine], EPERM)
    assert [run(prog, machine, nr) for nr in ALLOWED[machine]] == [seccomp.SECCOMP_RET_ALLOW] * 4
