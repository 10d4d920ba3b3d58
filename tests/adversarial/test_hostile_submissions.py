"""The adversarial suite: hostile submissions judged in real Docker containers, in every mode.

For each one, in cold, warm and fork-server containers: the verdict is one it may get
(never AC unless the code is also correct), the run ends within its limit plus a margin,
no container and no sandbox process is left (beyond the pool's ready ones), the host's
files are untouched, no secret reaches the report, the learner's code ran once, and a
correct submission that starts threads and a child of its own, judged right after, still
gets AC (in fork mode, usually by the same server that ran the hostile one).
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from judge.authoring.package import Problem
from judge.core.backend import Limits, Outcome, ResultWatch
from judge.core.execution import RUNNER
from judge.core.grading import judge_source
from judge.core.report import Report
from judge.core.runner.job import RunnerJob
from judge.expected import ExpectedStore
from sandbox.docker_backend import DockerBackend
from sandbox.docker_warm import PoolPolicy
from sandbox.image import LABEL, SANDBOX_USER
from tests.adversarial.hostile import (
    CORRECT_WITH_THREADS,
    HOST_SECRET,
    HOST_SECRET_ENV,
    HOSTILE,
    MARKER,
    OVERSIZED,
    Hostile,
)
from tests.factories import make_package

pytestmark = [pytest.mark.docker, pytest.mark.slow]

TIME_S = 2.0
# Killing, waiting for and inspecting a container after its deadline.
MARGIN_S = 3.0
SANDBOX_UID = int(SANDBOX_USER.split(":")[0])
# Fork-server jobs run as uids from here up (sandbox.docker_warm picks each server's range).
JOB_UIDS = 1_000_000
MODES = ["cold", "warm", "fork"]


@dataclass
class Recording:
    """Passes every run to the real backend and keeps the learner's (limits, outcome)."""

    inner: DockerBackend
    runs: list[tuple[Limits, Outcome]] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def is_sandbox(self) -> bool:
        return self.inner.is_sandbox

    def runtime_id(self) -> str:
        return self.inner.runtime_id()

    def run(self, stdin: bytes, limits: Limits, watch: ResultWatch | None = None) -> Outcome:
        outcome = self.inner.run(stdin, limits, watch)
        if [s.name for s in RunnerJob.from_bytes(stdin).solutions] == ["solution"]:
            self.runs.append((limits, outcome))
        return outcome


class LoopbackServer:
    """A TCP server on the host's loopback that counts every connection it accepts."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        self.sock.settimeout(0.2)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.accepted += 1
            conn.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2)
        self.sock.close()


@pytest.fixture(scope="module")
def hostile_problem(tmp_path_factory: pytest.TempPathFactory) -> Problem:
    root = tmp_path_factory.mktemp("hostile")
    reference = f'"""{MARKER}"""\n# {MARKER}\ndef f(x):\n    return x * 2\n'
    return Problem(make_package(root, reference=reference, time_s=TIME_S, memory_mb=256, output_kb=16))


@pytest.fixture(scope="module")
def docker_store(tmp_path_factory: pytest.TempPathFactory) -> ExpectedStore:
    return ExpectedStore(Path(tmp_path_factory.mktemp("docker-expected")))


@pytest.fixture(scope="module", params=MODES)
def sandbox(request: pytest.FixtureRequest, docker_backend: DockerBackend) -> Iterator[DockerBackend]:
    """The real backend in one mode; the pooled ones keep one ready container."""
    if request.param == "cold":
        yield docker_backend
        return
    backend = DockerBackend(docker_backend.engine, RUNNER, PoolPolicy(mode=request.param, size=1))
    yield backend
    backend.close()
    assert backend.containers() == []


def settled_containers(backend: DockerBackend) -> tuple[list[str], set[str]]:
    """This process's containers once the pool is full and idle, and the ready ones among them."""
    if backend.pool is None:
        return backend.containers(), set()
    assert backend.pool.fill(120), backend.pool.last_error
    backend.pool.settle()
    return backend.containers(), {c.cid for c in backend.pool.ready_sessions()}


@pytest.fixture
def loopback() -> Iterator[LoopbackServer]:
    server = LoopbackServer()
    yield server
    server.close()


def sandbox_pids(backend: DockerBackend, ready: set[str] = frozenset()) -> set[int]:  # type: ignore[assignment]
    """Host processes running as the sandbox's uid or a job's (containers share the host's
    uid space). A ready warm container's server (the sandbox uid) waits for the next job
    and is not counted; a fork-server job's uid is counted wherever it runs. Containers of
    other judges on this host (another process's benchmarks, say) are not ours to count."""
    ours = set(backend.containers())
    every = {c["Id"] for c in backend.client.api.containers(all=True, filters={"label": LABEL})}
    pids = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            status = Path(f"/proc/{entry}/status").read_text()
            cgroup = Path(f"/proc/{entry}/cgroup").read_text()
        except OSError:
            continue
        uid = next(int(line.split()[1]) for line in status.splitlines() if line.startswith("Uid:"))
        if any(cid in cgroup for cid in every - ours):
            continue
        if uid >= JOB_UIDS or (uid == SANDBOX_UID and not any(cid in cgroup for cid in ready)):
            pids.add(int(entry))
    return pids


def tree_digest(root: Path) -> str:
    h = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        h.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def leaked(report: Report, needles: list[str]) -> list[str]:
    text = json.dumps(report.to_dict(), ensure_ascii=False)
    return [n for n in needles if n and n in text]


def host_shadow_lines() -> list[str]:
    try:
        return [line for line in Path("/etc/shadow").read_text().splitlines() if line.strip()][:3]
    except OSError:
        return []


# A memory verdict is a race between the allocation and the 2 s clock: under a busy machine the
# clock can win (TLE), so these run alone, after the parallel phase of `make test`.
@pytest.mark.parametrize(
    "hostile",
    [
        pytest.param(h, id=h.name, marks=[pytest.mark.serial] if h.verdicts & {"MLE", "OLE"} else [])
        for h in HOSTILE
    ],
)
def test_hostile_submission(
    hostile: Hostile,
    hostile_problem: Problem,
    sandbox: DockerBackend,
    docker_store: ExpectedStore,
    loopback: LoopbackServer,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    monkeypatch.setenv(HOST_SECRET_ENV, HOST_SECRET)
    sentinel = tmp_path / "sentinel.txt"
    sentinel.write_text("untouched")
    _, ready_before = settled_containers(sandbox)
    before_pids = sandbox_pids(sandbox, ready_before)
    package_digest = tree_digest(hostile_problem.root)
    judge_digest = tree_digest(Path(__file__).resolve().parents[2] / "judge")
    recording = Recording(sandbox)

    source = hostile.source.replace("__PORT__", str(loopback.port))
    report = judge_source(hostile_problem, source, recording, docker_store)  # type: ignore[arg-type]

    assert str(report.verdict) in hostile.verdicts, (
        f"{hostile.name}: got {report.verdict}, expected one of {sorted(hostile.verdicts)}\n"
        + "\n".join(f"{c.name}: {c.verdict} {c.message.get('en')[:300]}" for c in report.cases)
    )
    # Each run ended within its limit plus a margin (the clock starts when the runner is ready).
    # One run per job, the public cases' and (unless that one stopped) the hidden cases': nothing
    # in the learner's output makes the judge run a job again.
    assert 1 <= len(recording.runs) <= 2
    for limits, outcome in recording.runs:
        assert outcome.ready_s is not None and outcome.ready_s <= limits.startup_s
        assert outcome.wall_s - outcome.ready_s <= limits.wall_s + MARGIN_S, outcome
    # Nothing is left behind, nothing on the host changed, nothing leaked.
    containers, ready = settled_containers(sandbox)
    assert set(containers) == ready
    assert sandbox_pids(sandbox, ready) - before_pids == set()
    assert sentinel.read_text() == "untouched"
    assert tree_digest(hostile_problem.root) == package_digest
    assert tree_digest(Path(__file__).resolve().parents[2] / "judge") == judge_digest
    assert loopback.accepted == 0
    assert leaked(report, [MARKER, HOST_SECRET, *host_shadow_lines(), *hostile.must_not_leak]) == []
    # The next learner is judged as if nothing happened, with threads and a child of its own. One
    # job shows it as well as two (the public cases' job comes first and gets the next sandbox),
    # and in cold and warm mode each job costs a container's start.
    after = judge_source(hostile_problem, CORRECT_WITH_THREADS, sandbox, docker_store, "public")
    assert str(after.verdict) == "AC", [(c.name, c.verdict, c.message) for c in after.cases]


def test_oversized_source_is_refused_without_running(
    hostile_problem: Problem, docker_backend: DockerBackend, docker_store: ExpectedStore
) -> None:
    recording = Recording(docker_backend)
    report = judge_source(hostile_problem, OVERSIZED, recording, docker_store)  # type: ignore[arg-type]
    assert str(report.verdict) == "CE" and "256 KiB" in report.cases[0].message
    assert recording.runs == []


def test_the_suite_is_large_enough() -> None:
    assert len(HOSTILE) + 1 >= 30
