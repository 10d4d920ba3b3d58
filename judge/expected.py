"""Reference and wrong-solution observations, computed through the same runner and cached.

One trusted run loads the reference and every wrong solution in one runner process (they
are the author's code, so sharing a process is safe) and runs every case. The raw frame
stream is cached on disk under the package's content hash and the backend's runtime
identity, so an edited package or another torch or image never reuses stale values.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import threading
from pathlib import Path

from judge.authoring.package import Problem, SolutionFile
from judge.core.backend import Backend, Outcome
from judge.core.errors import TrustedRunError
from judge.core.execution import batch_limits, interpret, limits_for, run_solutions
from judge.core.protocol import PROTOCOL_VERSION, StreamLimits, parse_stream
from judge.core.results import Expected, RunResult
from judge.core.runner.job import SolutionSource


class ExpectedStore:
    def __init__(self, cache_dir: Path, startup_s: float = 30.0) -> None:
        self.cache_dir = cache_dir
        self.startup_s = startup_s
        self._memo: dict[str, Expected] = {}
        self._lock = threading.Lock()

    def key(self, problem: Problem, backend: Backend) -> str:
        runtime = hashlib.sha256(backend.runtime_id().encode()).hexdigest()[:16]
        return f"{problem.id}-{problem.content_hash[:16]}-{runtime}-p{PROTOCOL_VERSION}"

    def at_hand(self, problem: Problem, backend: Backend) -> Expected | None:
        """The observations this process already holds (the usual case once a problem was judged)."""
        with self._lock:
            return self._memo.get(self.key(problem, backend))

    def get(self, problem: Problem, backend: Backend) -> Expected:
        key = self.key(problem, backend)
        with self._lock:
            if key in self._memo:
                return self._memo[key]
        expected = self._load_or_compute(problem, backend, key)
        with self._lock:
            self._memo[key] = expected
        return expected

    def _load_or_compute(self, problem: Problem, backend: Backend, key: str) -> Expected:
        files = trusted_files(problem)
        limits = batch_limits(limits_for(problem, self.startup_s), len(files))
        path = self.cache_dir / f"{key}.frames"
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        # One process computes a given key; others wait for its file.
        with open(self.cache_dir / f"{key}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if path.exists():
                data = path.read_bytes()
                parsed = parse_stream(data, StreamLimits(max_bytes=1 << 40))
                result = interpret(parsed, Outcome(data, b"", 0, None, 0.0), len(files), limits)
                check_reference(problem, result)
            else:
                result = run_solutions(
                    problem,
                    [SolutionSource(f.name, f.source(), f"{f.name}.py") for f in files],
                    [c.name for c in problem.cases],
                    backend,
                    limits,
                    problem.reference_parts(),
                )
                check_reference(problem, result)  # never cache a broken reference
                tmp = path.with_suffix(f".tmp{os.getpid()}")
                tmp.write_bytes(result.outcome.result)
                tmp.replace(path)
        return Expected.from_runs(result.solutions, [(f.name, f.hint()) for f in files[1:]])


def trusted_files(problem: Problem) -> list[SolutionFile]:
    return [problem.reference, *problem.solutions("wrong")]


def check_reference(problem: Problem, result: RunResult) -> None:
    ref = result.solutions[0]
    if result.stop is not None:
        raise TrustedRunError(
            f"problem {problem.id}: the trusted run stopped: {result.stop.text.en}\n{result.log}"
        )
    if ref.load_status != "ok":
        raise TrustedRunError(f"problem {problem.id}: reference.py does not load: {ref.load_message}")
    failed = [f"{n}: {c.message or c.status}" for n, c in ref.cases.items() if c.status != "ok"]
    if failed:
        raise TrustedRunError(f"problem {problem.id}: reference.py fails cases:\n" + "\n".join(failed))
