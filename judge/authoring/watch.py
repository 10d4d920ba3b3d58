"""Watching packages for saves: `judge validate --watch` re-validates a package when one of its
files, or a file of a part it imports, changes.

Polling, not inotify: it works the same on every system and in every editor (some save by
writing a new file and renaming it over the old one), and a package is a few dozen files.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from pathlib import Path

# Where editors, Python and the judge leave files that are not the package's.
IGNORED_PARTS = frozenset({"__pycache__", ".git", ".mypy_cache", ".ruff_cache", ".pytest_cache"})
IGNORED_SUFFIXES = (".pyc", ".swp", ".swo", "~", ".tmp")
POLL_S = 0.3

Snapshot = dict[str, tuple[int, int]]  # path -> (mtime in ns, size)


def snapshot(roots: Iterable[Path]) -> Snapshot:
    """Every package file under `roots`, with its modification time and size."""
    found: Snapshot = {}
    for root in roots:
        if not root.is_dir():
            continue
        for path in root.rglob("*"):
            rel = path.relative_to(root).parts
            ignored = any(p in IGNORED_PARTS or p.startswith(".#") for p in rel)
            if ignored or path.name.endswith(IGNORED_SUFFIXES):
                continue
            try:
                st = path.stat()
            except OSError:  # removed while we looked
                continue
            if path.is_file():
                found[str(path)] = (st.st_mtime_ns, st.st_size)
    return found


def changes(roots: Iterable[Path], poll_s: float = POLL_S) -> Iterator[list[str]]:
    """Each time a file under `roots` is saved, created or removed: which ones (after the burst
    of writes an editor makes for one save has settled). The files are read as they are now,
    when this is called, not at the first `next()`: a save made in between is seen."""
    watched = list(roots)
    return _changes(watched, snapshot(watched), poll_s)


def _changes(watched: list[Path], before: Snapshot, poll_s: float) -> Iterator[list[str]]:
    while True:
        time.sleep(poll_s)
        now = snapshot(watched)
        if now == before:
            continue
        time.sleep(poll_s)  # let a save that writes several files finish
        settled = snapshot(watched)
        changed = sorted(p for p in set(before) | set(settled) if before.get(p) != settled.get(p))
        before = settled
        if changed:
            yield changed
