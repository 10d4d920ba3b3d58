"""The adversarial suite: hostile submissions judged in real Docker containers.

For each one: the verdict is one it may get (never AC unless the code is also correct),
the run ends within its limit plus a margin, no container and no sandbox process is left,
the host's files are untouched, no secret reaches the report, and a correct submission
judged right after still gets AC.
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

from judge.expected import ExpectedStore
from judge.grading import judge_source
from judge.package import Problem
from judge.report import Report
from judge.runner.job import RunnerJob
from sandbox.backend import Limits, Outcome
from sandbox.docker_backend import DockerBackend
from sandbox.image import SANDBOX_USER
from tests.adversarial.hostile import (
    CORRECT,
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

    @property
    def python(self) -> str:
        return self.inner.python

    def runtime_id(self) -> str:
        return self.inner.runtime_id()

    def run(self, command: list[str], stdin: bytes, limits: Limits) -> Outcome:
        outcome = self.inner.run(command, stdin, limits)
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


@pytest.fixture
def loopback() -> Iterator[LoopbackServer]:
    server = LoopbackServer()
    yield server
    server.close()


def sandbox_pids() -> set[int]:
    """Host processes running as the sandbox's uid (containers share the host's uid space)."""
    pids = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            status = Path(f"/proc/{entry}/status").read_text()
        except OSError:
            continue
        for line in status.splitlines():
            if line.startswith("Uid:") and int(line.split()[1]) == SANDBOX_UID:
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


@pytest.mark.parametrize("hostile", HOSTILE, ids=[h.name for h in HOSTILE])
def test_hostile_submission(
    hostile: Hostile,
    hostile_problem: Problem,
    docker_backend: DockerBackend,
    docker_store: ExpectedStore,
    loopback: LoopbackServer,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    monkeypatch.setenv(HOST_SECRET_ENV, HOST_SECRET)
    sentinel = tmp_path / "sentinel.txt"
    sentinel.write_text("untouched")
    before_pids = sandbox_pids()
    package_digest = tree_digest(hostile_problem.root)
    judge_digest = tree_digest(Path(__file__).resolve().parents[2] / "judge")
    recording = Recording(docker_backend)

    source = hostile.source.replace("__PORT__", str(loopback.port))
    report = judge_source(hostile_problem, source, recording, docker_store)  # type: ignore[arg-type]

    assert str(report.verdict) in hostile.verdicts, (
        f"{hostile.name}: got {report.verdict}, expected one of {sorted(hostile.verdicts)}\n"
        + "\n".join(f"{c.name}: {c.verdict} {c.message[:300]}" for c in report.cases)
    )
    # The run ended within its limit plus a margin (the clock starts when the runner is ready).
    (limits, outcome), *_ = recording.runs
    assert outcome.ready_s is not None and outcome.ready_s <= limits.startup_s
    assert outcome.wall_s - outcome.ready_s <= limits.wall_s + MARGIN_S, outcome
    # Nothing is left behind, nothing on the host changed, nothing leaked.
    assert docker_backend.containers() == []
    assert sandbox_pids() - before_pids == set()
    assert sentinel.read_text() == "untouched"
    assert tree_digest(hostile_problem.root) == package_digest
    assert tree_digest(Path(__file__).resolve().parents[2] / "judge") == judge_digest
    assert loopback.accepted == 0
    assert leaked(report, [MARKER, HOST_SECRET, *host_shadow_lines(), *hostile.must_not_leak]) == []
    # The next learner is judged as if nothing happened.
    after = judge_source(hostile_problem, CORRECT, docker_backend, docker_store)
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
