"""`judge worker` processes against a shared database: many jobs, two workers, nothing lost
or judged twice; a worker killed with SIGKILL mid-judge, after which the job is judged once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine, func, select
from sqlalchemy.orm import Session, sessionmaker

from tests.factories import make_package
from tests.paths import REPO_ROOT
from tests.web.factories import make_client, make_settings, register, submit
from web.db import make_engine, make_sessionmaker
from web.submissions.models import Submission, SubmissionEvent

pytestmark = pytest.mark.slow

CORRECT = "def f(x):\n    return x * 2\n"
WRONG = "def f(x):\n    return x * 3\n"
SLOW_CORRECT = "import time\n\ndef f(x):\n    time.sleep(2)\n    return x * 2\n"


@pytest.fixture
def problems_dir(tmp_path: Path) -> Path:
    root = tmp_path / "problems"
    root.mkdir()
    make_package(root, time_s=20)
    return root


class Workers:
    """`judge worker` processes started for one test and always stopped after it."""

    def __init__(self, env: dict[str, str], log_dir: Path) -> None:
        self.env = env
        self.log_dir = log_dir
        self.procs: list[subprocess.Popen[bytes]] = []

    def start(self, threads: int = 1, **extra: str) -> subprocess.Popen[bytes]:
        # Output to a file: an unread pipe would block a chatty worker.
        with open(self.log_dir / f"worker-{len(self.procs)}.log", "wb") as log:
            proc = subprocess.Popen(
                [sys.executable, "-m", "judge", "worker", "--threads", str(threads)],
                env={**self.env, **extra},
                cwd=REPO_ROOT,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        self.procs.append(proc)
        return proc

    def stop_all(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in self.procs:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()

    def logs(self) -> str:
        files = sorted(self.log_dir.glob("worker-*.log"))
        return "\n".join(p.read_text(errors="replace")[-3000:] for p in files)


def worker_env(database_url: str, problems_dir: Path, tmp_path: Path) -> dict[str, str]:
    return {
        **os.environ,
        "JUDGE_DATABASE_URL": database_url,
        "JUDGE_PROBLEMS_DIR": str(problems_dir),
        "JUDGE_CACHE_DIR": str(tmp_path / "cache"),
        # Docker's fork servers where an engine answers (always under CI), as in production,
        # and 10x faster than a new local runner per judgement; else the local backend.
        "JUDGE_BACKEND": "auto",
        "JUDGE_ALLOW_UNSANDBOXED": "1",
        "JUDGE_POLL_S": "0.05",
    }


@pytest.fixture
def workers(database_url: str, problems_dir: Path, tmp_path: Path) -> Iterator[Workers]:
    w = Workers(worker_env(database_url, problems_dir, tmp_path), tmp_path)
    yield w
    w.stop_all()


@pytest.fixture
def sessions() -> Iterator[Callable[[str], sessionmaker[Session]]]:
    """Session factories on a test's database; their engines are disposed afterwards."""
    engines: list[Engine] = []

    def make(url: str) -> sessionmaker[Session]:
        engines.append(make_engine(url))
        return make_sessionmaker(engines[-1])

    yield make
    for engine in engines:
        engine.dispose()


def wait_until_done(
    factory: sessionmaker[Session], n: int, timeout: float, logs: Callable[[], str] = lambda: ""
) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with factory() as s:
            if s.scalar(select(func.count()).where(Submission.status == "done")) == n:
                return
        time.sleep(0.2)
    raise AssertionError(f"not all {n} submissions were judged within {timeout} s; workers said:\n{logs()}")


def event_counts(factory: sessionmaker[Session], kind: str) -> dict[int, int]:
    with factory() as s:
        rows = s.execute(
            select(SubmissionEvent.submission_id, func.count())
            .where(SubmissionEvent.kind == kind)
            .group_by(SubmissionEvent.submission_id)
        ).all()
    return {int(sub_id): int(n) for sub_id, n in rows}


def test_two_worker_processes_judge_fifty_submissions_once_each(
    postgres_url: str, problems_dir: Path, tmp_path: Path, sessions: Callable[[str], sessionmaker[Session]]
) -> None:
    settings = make_settings(
        tmp_path,
        postgres_url,
        problems_dir=problems_dir,
        workers=0,
        submits_per_user=1000,
        submits_per_address=1000,
        jobs_per_user=1000,  # the fifty wait in the queue at once, before any worker starts
    )
    with make_client(settings) as client:
        _, token = register(client)
        ids = [submit(client, token, CORRECT if i % 2 else WRONG, problem_id="901") for i in range(50)]
    pool = Workers(worker_env(postgres_url, problems_dir, tmp_path), tmp_path)
    try:
        first, second = pool.start(threads=2), pool.start(threads=2)
        factory = sessions(postgres_url)
        wait_until_done(factory, 50, timeout=400, logs=pool.logs)
    finally:
        pool.stop_all()
    assert first.returncode == 0 and second.returncode == 0  # both stopped cleanly on SIGTERM
    assert event_counts(factory, "done") == {i: 1 for i in ids}  # none lost, none judged twice
    assert event_counts(factory, "claimed") == {i: 1 for i in ids}
    with factory() as s:
        rows = s.execute(select(Submission.id, Submission.verdict, Submission.worker)).all()
    verdicts = {sub_id: verdict for sub_id, verdict, _ in rows}
    assert verdicts == {i: ("AC" if n % 2 else "WA") for n, i in enumerate(ids)}
    pids = {str(worker).split("/")[0] for _, _, worker in rows}
    assert len(pids) == 2  # both processes took jobs


def test_a_worker_killed_mid_judge_leaves_the_job_to_be_judged_once(
    database_url: str,
    problems_dir: Path,
    workers: Workers,
    tmp_path: Path,
    sessions: Callable[[str], sessionmaker[Session]],
) -> None:
    settings = make_settings(tmp_path, database_url, problems_dir=problems_dir, workers=0)
    with make_client(settings) as client:
        _, token = register(client)
        sub_id = submit(client, token, SLOW_CORRECT, problem_id="901")
    factory = sessions(database_url)
    doomed = workers.start(JUDGE_LEASE_S="3", JUDGE_HEARTBEAT_S="0.5")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        with factory() as s:
            if s.scalar(select(Submission.status).where(Submission.id == sub_id)) == "running":
                break
        time.sleep(0.05)
    else:
        raise AssertionError("the first worker never claimed the job")
    time.sleep(1.0)  # well inside the judgement (the solution sleeps 2 s per case)
    doomed.send_signal(signal.SIGKILL)
    doomed.wait()
    survivor = workers.start(JUDGE_LEASE_S="3", JUDGE_HEARTBEAT_S="0.5")
    wait_until_done(factory, 1, timeout=120, logs=workers.logs)
    with factory() as s:
        sub = s.get(Submission, sub_id)
        assert sub is not None
        assert (sub.verdict, sub.score, sub.attempts) == ("AC", 100, 2)
        assert sub.worker is not None and sub.worker.split("/")[0].endswith(f":{survivor.pid}")
    assert event_counts(factory, "claimed") == {sub_id: 2}
    assert event_counts(factory, "done") == {sub_id: 1}
