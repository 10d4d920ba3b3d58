"""What `judge validate` found, kept per package content: the author's loop reads it back.

A validation of a package whose files (its parts' references included: `Problem.content_hash`)
and whose judge are unchanged since the last one finds what that one found: nothing is run, the
report is read back (well under a second; `--fresh` runs it anyway). `judge preview` shows the
newest record of the package's current content as its validation state.

Records live in the cache folder (`settings.cache_dir`), one JSON file per package, content,
judge code, backend and scope: `validated/<id>-<key>.json`. The judge's own code is part of the
key (a hash of its Python files), so a changed check never answers from a stale record.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from judge.authoring.package import Problem
from judge.authoring.validate import Scope, Validation

FORMAT = 1
FOLDER = "validated"
JUDGE_ROOT = Path(__file__).resolve().parents[1]


@cache
def judge_code_hash() -> str:
    """A hash of the judge's Python files: a record is only as good as the checks that wrote it."""
    h = hashlib.sha256()
    for path in sorted(JUDGE_ROOT.rglob("*.py")):
        h.update(path.relative_to(JUDGE_ROOT).as_posix().encode() + b"\0")
        h.update(path.read_bytes())
    return h.hexdigest()


@dataclass(frozen=True)
class Record:
    """One stored validation, as `judge preview` and `--watch` read it."""

    problem: str
    content_hash: str
    judge: str  # judge_code_hash() of the judge that wrote it
    backend: str
    scope: str  # Scope.label(): "" for a whole validation
    ok: bool
    finished_at: float  # time.time()
    report: dict[str, Any]  # Validation.to_dict()

    @property
    def whole(self) -> bool:
        return self.scope == ""


def _key(problem: Problem, backend: str, scope: Scope) -> str:
    parts = [str(FORMAT), problem.content_hash, judge_code_hash(), backend, scope.label()]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:32]


def _path(cache_dir: Path, problem: Problem, backend: str, scope: Scope) -> Path:
    return cache_dir / FOLDER / f"{problem.id}-{_key(problem, backend, scope)}.json"


def recall(cache_dir: Path, problem: Problem, backend: str, scope: Scope) -> Validation | None:
    """The validation of this very content with this judge, backend and scope, or None."""
    record = _read(_path(cache_dir, problem, backend, scope))
    if record is None or record.content_hash != problem.content_hash:
        return None
    return Validation.from_dict(record.report, scope)


def remember(cache_dir: Path, problem: Problem, backend: str, validation: Validation) -> None:
    """Keep `validation` of `problem` (written whole or not at all: a reader never sees half)."""
    record = {
        "format": FORMAT,
        "problem": problem.id,
        "content_hash": problem.content_hash,
        "judge": judge_code_hash(),
        "backend": backend,
        "scope": validation.scope.label(),
        "ok": validation.ok,
        "finished_at": time.time(),
        "report": validation.to_dict(),
    }
    target = _path(cache_dir, problem, backend, validation.scope)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-", suffix=".json")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(record, f, ensure_ascii=False)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def latest(cache_dir: Path, problem: Problem) -> Record | None:
    """The newest validation of the package's current content by this judge, any backend or
    scope (a whole one before a quick one of the same moment): what a preview shows."""
    found = [
        r
        for path in (cache_dir / FOLDER).glob(f"{problem.id}-*.json")
        if (r := _read(path)) is not None
        and r.content_hash == problem.content_hash
        and r.judge == judge_code_hash()
    ]
    return max(found, key=lambda r: (r.finished_at, r.whole), default=None)


def _read(path: Path) -> Record | None:
    """A record, or None when there is none or it cannot be read (it is only a cache)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("format") != FORMAT:
            return None
        return Record(
            problem=str(data["problem"]),
            content_hash=str(data["content_hash"]),
            judge=str(data["judge"]),
            backend=str(data["backend"]),
            scope=str(data["scope"]),
            ok=bool(data["ok"]),
            finished_at=float(data["finished_at"]),
            report=dict(data["report"]),
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
