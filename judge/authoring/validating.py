"""`judge validate`'s work over several packages: each read back from its last validation when
nothing changed (judge.authoring.validated), else validated, several at once; the sandbox
started only when some package needs a run.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from judge.authoring import validated
from judge.authoring.package import PackageError, Problem
from judge.authoring.validate import Scope, Validation, validate_package
from judge.backends import BackendName, make_backend
from judge.core.backend import Backend
from judge.settings import JudgeSettings

Progress = Callable[[Path, Validation, float], None]


class Validator:
    """Validates packages with one backend, made on first need and closed by `close()`."""

    def __init__(
        self, settings: JudgeSettings, backend: BackendName, scope: Scope, fresh: bool = False, jobs: int = 1
    ) -> None:
        self.settings, self.backend_name, self.scope, self.fresh = settings, backend, scope, fresh
        self.jobs = max(1, jobs)
        self._backend: Backend | None = None
        self._lock = threading.Lock()

    def backend(self) -> Backend:
        with self._lock:
            if self._backend is None:
                # Each package's judgements wait on a sandbox; with several packages at once
                # every ready sandbox (and core) has work: as many ready as packages in flight.
                sandbox = self.settings.sandbox
                if self.jobs > sandbox.pool_size:
                    sandbox = sandbox.model_copy(update={"pool_size": self.jobs})
                self._backend, _ = make_backend(self.backend_name, sandbox)
            return self._backend

    def one(self, path: Path) -> Validation:
        """`path`'s validation: read back when its content was validated already, else run (and
        kept for next time)."""
        try:
            problem: Problem | None = Problem(path)
        except PackageError:
            problem = None  # validate_package says why, under "problem.toml"
        cache = self.settings.cache_dir
        if problem is not None and not self.fresh:
            known = validated.recall(cache, problem, self.backend_name, self.scope)
            if known is not None:
                return known
        result = validate_package(path, self.backend(), self.settings, self.scope)
        if problem is not None:
            validated.remember(cache, problem, self.backend_name, result)
        return result

    def many(self, paths: list[Path], progress: Progress | None = None) -> list[Validation]:
        """Each package's validation, in the order given, `jobs` at once."""
        jobs = min(self.jobs, len(paths)) or 1

        def one(path: Path) -> Validation:
            started = time.monotonic()
            result = self.one(path)
            if progress is not None:
                progress(path, result, time.monotonic() - started)
            return result

        if jobs == 1:
            return [one(p) for p in paths]
        with ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="validate") as pool:
            return list(pool.map(one, paths))

    def close(self) -> None:
        if self._backend is not None:
            self._backend.close()


def roots_of(path: Path) -> list[Path]:
    """The folders whose files a package's validation reads: its own and its parts' (a part's
    reference is part of what it is judged with)."""
    try:
        problem = Problem(path)
        return [problem.root, *(p.root for p in problem.part_problems)]
    except PackageError:
        return [path.resolve()]


def changed_checks(before: Validation | None, after: Validation) -> list[str]:
    """What `--watch` prints after a re-validation: the checks whose outcome or words changed,
    those that are new, and those that are gone."""
    old = {} if before is None else {c.name: c for c in before.checks}
    new = {c.name: c for c in after.checks}
    lines = []
    for name, c in new.items():
        was = old.get(name)
        if was is None or (was.level, was.detail) != (c.level, c.detail):
            mark = "✓" if c.ok else "✗"
            lines.append(f"  {mark} {name}  {c.detail.splitlines()[0] if c.detail else ''}")
    lines.extend(f"  - {name}  (no longer reported)" for name in old if name not in new)
    return lines


def say(line: str) -> None:
    """A progress line on stderr (stdout keeps the report for --json)."""
    print(line, file=sys.stderr, flush=True)
