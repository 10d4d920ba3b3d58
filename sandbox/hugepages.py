"""Back a preloaded server's private memory with huge pages, to make its forks cheap (stdlib only).

A fork copies the page-table entries of the parent's private memory and the child's exit
tears them down again: for a server with torch loaded (about 190 MB of heap and anonymous
mappings, some 47,000 pages of 4 KiB) that is most of the cost of a fork and of a child's
exit. With that memory in 2 MiB pages there are some 90 entries instead. A child that writes
a shared huge page still copies only the 4 KiB it writes (the kernel splits the mapping),
so the memory a job costs does not grow.

`collapse()` asks for that with madvise(MADV_COLLAPSE) (Linux 6.1+), synchronously, once,
after the preload. Where the kernel cannot (an older one, huge pages turned off), it says
no and nothing changes: this is an optimisation, never a requirement.
"""

from __future__ import annotations

import ctypes
import re

MADV_HUGEPAGE = 14
MADV_COLLAPSE = 25
HUGE = 2 * 1024 * 1024
# Smaller mappings are not worth a system call: they hold few pages.
MIN_BYTES = 4 * 1024 * 1024
# Private, writable, anonymous mappings (the heap included): the ones a fork copies.
_ANON = re.compile(r"([0-9a-f]+)-([0-9a-f]+) rw-p 0+ 00:00 0\s*(\[heap\])?\s*$")


def anonymous_ranges(maps: str, min_bytes: int = MIN_BYTES) -> list[tuple[int, int]]:
    """The huge-page-aligned parts of the private anonymous mappings in a /proc/PID/maps text."""
    ranges = []
    for line in maps.splitlines():
        m = _ANON.match(line)
        if m is None:
            continue
        start = (int(m[1], 16) + HUGE - 1) & ~(HUGE - 1)
        end = int(m[2], 16) & ~(HUGE - 1)
        if end - start >= min_bytes:
            ranges.append((start, end))
    return ranges


def collapse() -> int:
    """Ask for huge pages under this process's private memory. Returns the bytes collapsed."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        madvise = libc.madvise
        madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
        with open("/proc/self/maps") as f:
            ranges = anonymous_ranges(f.read())
    except (OSError, AttributeError):
        return 0
    done = 0
    for start, end in ranges:
        # HUGEPAGE first: where huge pages are "madvise" only, it lets the range have them
        # (and later allocations in it get them directly). A refusal of either is harmless.
        madvise(start, end - start, MADV_HUGEPAGE)
        if madvise(start, end - start, MADV_COLLAPSE) == 0:
            done += end - start
    return done
