"""The operator's deployment, tried: PostgreSQL, `judge serve --processes 2` that judges nothing,
two `judge worker` processes judging in Docker's fork servers; learners submit and long-poll
while one web process and one worker are killed with SIGKILL. Every accepted submission is
judged exactly once, with the right verdict, and every long-poll answers: the verdicts come from
other processes, so each answer in time is a PostgreSQL notice that reached the web process."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select

from tests.paths import REPO_ROOT
from tests.web.factories import PASSWORD, read_204, serving, unique_name
from web.db import make_engine, make_sessionmaker
from web.submissions.models import EventKind, Submission, SubmissionEvent

LEARNERS = 4
LOAD_S = 13.0
KILL_WEB_AT_S = 4.0
KILL_WORKER_AT_S = 7.0
LEASE_S = 4
# A verdict written by a worker process is seen by the web process through its notice; without
# one it would be seen only at the long-poll's next re-read, 5 s later.
SEEN_WITHIN_S = 2.0
# serial: its load and its 2-second answers are measured, so it runs alone.
pytestmark = [pytest.mark.slow, pytest.mark.docker, pytest.mark.serial]

GOOD = read_204("reference.py")
BAD = read_204("solutions/wrong/eps_outside_sqrt.py")


@dataclass
class Learner:
    token: str
    accepted: dict[int, str] = field(default_factory=dict)  # id -> the verdict it must get
    post_errors: int = 0
    poll_errors: int = 0
    seen_done: dict[int, float] = field(default_factory=dict)  # id -> when the client saw it (epoch)
    failures: list[str] = field(default_factory=list)


def account(url: str) -> str:
    name = unique_name("deploy")
    with httpx.Client(base_url=url, timeout=30) as client:
        res = client.post("/api/auth/register", json={"username": name, "password": PASSWORD})
        assert res.status_code == 201, res.text
        res = client.post("/api/auth/token", json={"username": name, "password": PASSWORD})
        assert res.status_code == 201, res.text
        token: str = res.json()["token"]
        return token


def learn(url: str, learner: Learner, stop: threading.Event) -> None:
    """Submit, follow to the verdict with the long-poll, submit again. A connection that breaks
    (its web process was killed) is opened again, as the page does."""
    headers = {"Authorization": f"Bearer {learner.token}"}
    n = 0
    with httpx.Client(base_url=url, timeout=40, headers=headers) as client:
        while not stop.is_set():
            n += 1
            code, verdict = (BAD, "WA") if n % 4 == 0 else (GOOD, "AC")
            try:
                res = client.post("/api/submissions", json={"problem_id": "204", "code": code})
            except httpx.TransportError:
                learner.post_errors += 1  # the pool drops the broken connection: ask again
                continue
            if res.status_code != 202:
                learner.failures.append(f"POST {res.status_code} {res.text[:200]}")
                return
            sub_id = int(res.json()["id"])
            learner.accepted[sub_id] = verdict
            give_up = time.monotonic() + 120
            while time.monotonic() < give_up:
                try:
                    res = client.get(f"/api/submissions/{sub_id}", params={"wait": 20})
                except httpx.TransportError:
                    learner.poll_errors += 1
                    continue
                if res.status_code != 200:
                    learner.failures.append(f"GET {sub_id}: {res.status_code} {res.text[:200]}")
                    return
                body = res.json()
                if body["status"] == "done":
                    learner.seen_done[sub_id] = time.time()
                    if body["verdict"] != verdict:
                        learner.failures.append(f"{sub_id}: {body['verdict']}, not {verdict}")
                    break
            else:
                learner.failures.append(f"{sub_id} was not seen judged within 120 s")


def web_children(parent: int) -> list[int]:
    """The web processes of `judge serve --processes N`: its children that serve (not
    multiprocessing's resource tracker)."""
    found = []
    for task in Path(f"/proc/{parent}/task").iterdir():
        for pid in (task / "children").read_text().split():
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            if b"spawn_main" in cmdline and b"resource_tracker" not in cmdline:
                found.append(int(pid))
    return sorted(found)


@contextmanager
def judge_worker(env: dict[str, str], log: Path) -> Iterator[subprocess.Popen[bytes]]:
    with log.open("w") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "judge", "worker", "--threads", "1"],
            env=env,
            cwd=REPO_ROOT,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        yield process
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(60)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def events_per_submission(session: Any, kind: EventKind) -> dict[int, int]:
    """How many `kind` events each submission has."""
    counted = session.execute(
        select(SubmissionEvent.submission_id, func.count())
        .where(SubmissionEvent.kind == kind)
        .group_by(SubmissionEvent.submission_id)
    )
    return {sub_id: int(n) for sub_id, n in counted.all()}


def running_on(factory: Any, worker_pid: int) -> bool:
    """Is the worker process `worker_pid` judging something now?"""
    with factory() as s:
        workers = s.scalars(select(Submission.worker).where(Submission.status == "running")).all()
    return any(w and w.split("/")[0].endswith(f":{worker_pid}") for w in workers)


def test_two_web_and_two_worker_processes_survive_sigkill_under_load(
    tmp_path: Path,
    postgres_url: str,
    docker_backend: Any,
) -> None:
    env = {
        "JUDGE_DATABASE_URL": postgres_url,
        "JUDGE_DATA_DIR": str(tmp_path),
        "JUDGE_WORKERS": "0",
        "JUDGE_BACKEND": "docker",
        "JUDGE_SANDBOX__MODE": "fork",
        "JUDGE_SANDBOX__POOL_SIZE": "1",
        "JUDGE_LEASE_S": str(LEASE_S),
        "JUDGE_HEARTBEAT_S": "1",
        "JUDGE_METRICS_DIR": str(tmp_path / "metrics"),
        "JUDGE_SUBMITS_PER_USER": "100000",
        "JUDGE_SUBMITS_PER_ADDRESS": "100000",
    }
    engine = make_engine(postgres_url)
    factory = make_sessionmaker(engine)
    learners: list[Learner] = []
    with ExitStack() as stack:
        # The killed worker's fork server is left behind, as after a crash; remove it.
        stack.callback(docker_backend.engine.reap_stale)
        server = stack.enter_context(serving(tmp_path, "--processes", "2", **env))
        worker_env = {**server.env}
        workers = [
            stack.enter_context(judge_worker(worker_env, tmp_path / f"worker-{i}.log")) for i in range(2)
        ]
        before = web_children(server.process.pid)
        assert len(before) == 2, before
        learners = [Learner(account(server.url)) for _ in range(LEARNERS)]

        stop = threading.Event()
        threads = [threading.Thread(target=learn, args=(server.url, ln, stop)) for ln in learners]
        started = time.monotonic()
        for t in threads:
            t.start()
        # The workers' first judgements wait for their fork servers (torch imported once).
        time.sleep(KILL_WEB_AT_S)
        os.kill(before[0], signal.SIGKILL)
        killed_web_at = time.time()
        # Kill a worker in the middle of a judgement: its job must come back after the lease.
        victim = workers[0]
        deadline = time.monotonic() + 30
        time.sleep(max(0.0, KILL_WORKER_AT_S - (time.monotonic() - started)))
        while not running_on(factory, victim.pid) and time.monotonic() < deadline:
            time.sleep(0.005)
        assert running_on(factory, victim.pid), "the worker to kill never judged anything"
        victim.send_signal(signal.SIGKILL)
        victim.wait()
        time.sleep(max(0.0, LOAD_S - (time.monotonic() - started)))
        stop.set()
        for t in threads:
            t.join(180)
            assert not t.is_alive(), "a learner's long-poll never answered"

        # uvicorn's supervisor started a new web process in place of the killed one.
        after = web_children(server.process.pid)
        assert len(after) == 2 and before[0] not in after, (before, after)
        with httpx.Client(base_url=server.url, timeout=10) as client:
            metrics = client.get("/metrics").text

    failures = [f for ln in learners for f in ln.failures]
    assert not failures, failures
    accepted = {sub_id: v for ln in learners for sub_id, v in ln.accepted.items()}
    post_errors = sum(ln.post_errors for ln in learners)
    assert len(accepted) >= 25, f"only {len(accepted)} submissions under load"

    with factory() as s:
        rows = s.execute(
            select(Submission.id, Submission.status, Submission.verdict, Submission.finished_at)
        ).all()
        done_events = events_per_submission(s, EventKind.DONE)
        claims = events_per_submission(s, EventKind.CLAIMED)
    engine.dispose()
    by_id = {r.id: r for r in rows}
    # Every accepted POST has its row, judged once, with the verdict the learner was shown.
    for sub_id, verdict in accepted.items():
        row = by_id[sub_id]
        assert row.status == "done" and row.verdict == verdict, (sub_id, row)
        assert done_events.get(sub_id) == 1, (sub_id, done_events.get(sub_id))
    # A POST whose answer was lost with its web process made at most one row, judged too.
    unanswered = set(by_id) - set(accepted)
    assert len(unanswered) <= post_errors, (unanswered, post_errors)
    assert all(by_id[i].status == "done" and done_events.get(i) == 1 for i in unanswered)
    # The killed worker's job was claimed again after its lease and judged by the other.
    assert any(n >= 2 for n in claims.values()), "no job was taken over from the killed worker"
    # Each verdict reached the long-polling web process by notice, except those whose web
    # process was killed under them (their learner asked again).
    late = [
        (sub_id, round(seen - by_id[sub_id].finished_at.timestamp(), 2))
        for ln in learners
        for sub_id, seen in ln.seen_done.items()
        if seen - by_id[sub_id].finished_at.timestamp() > SEEN_WITHIN_S
        and abs(by_id[sub_id].finished_at.timestamp() - killed_web_at) > 5
    ]
    assert not late, f"verdicts seen late (no notice?): {late}"
    # /metrics adds up every process of the host: the workers' judgements are counted there.
    judged = sum(
        float(line.rsplit(" ", 1)[1])
        for line in metrics.splitlines()
        if line.startswith("judge_verdicts_total{")
    )
    # (A worker killed between writing a result and counting it would miss one.)
    assert judged >= len(accepted) - 1, (judged, len(accepted), metrics[:2000])
    print(
        f"\n{len(accepted)} accepted, {post_errors} POSTs and "
        f"{sum(ln.poll_errors for ln in learners)} long-polls cut by the kill, "
        f"{sum(1 for n in claims.values() if n >= 2)} jobs taken over"
    )
