"""Which mappings a fork server asks huge pages for."""

from __future__ import annotations

import subprocess
import sys

from sandbox.hugepages import HUGE, anonymous_ranges
from tests.paths import REPO_ROOT

MAPS = """\
55d0c0000000-55d0c0a00000 rw-p 00000000 00:00 0                          [heap]
7f0000100000-7f0001000000 rw-p 00000000 00:00 0
7f0002000000-7f0002200000 rw-p 00000000 00:00 0
7f0003000000-7f0004000000 rw-p 00200000 fe:00 5383982                    /usr/lib/libtorch_cpu.so
7f0005000000-7f0006000000 r--p 00000000 00:00 0
7ffc00000000-7ffc01000000 rw-p 00000000 00:00 0                          [stack]
"""


def test_only_large_private_anonymous_writable_mappings_aligned_to_huge_pages() -> None:
    assert anonymous_ranges(MAPS) == [
        (0x55D0C0000000, 0x55D0C0A00000),  # the heap
        (0x7F0000200000, 0x7F0001000000),  # start rounded up to a huge page
    ]  # not: the 2 MiB one (too small), a file's, a read-only one, the stack
    assert all(start % HUGE == 0 and end % HUGE == 0 for start, end in anonymous_ranges(MAPS))


def test_collapsing_a_process_memory_keeps_its_contents() -> None:
    code = """
import hashlib, os
from sandbox import hugepages
data = bytearray(os.urandom(32 * 1024 * 1024))
before = hashlib.sha256(data).hexdigest()
done = hugepages.collapse()
assert done >= 0 and hashlib.sha256(data).hexdigest() == before
print("ok")
"""
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr[-2000:]
