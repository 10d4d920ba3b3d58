"""Factories for web tests: settings on a fresh database, clients, accounts, classes, submissions."""

from __future__ import annotations

import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, cast

from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import select

from judge.core.verdicts import Verdict
from tests.paths import REPO_ROOT
from web.app import create_app
from web.auth.models import User
from web.classes.models import Assignment, AssignmentProblem, Group, Membership
from web.db import utcnow
from web.judging.records import StoredReport
from web.platform import Platform
from web.settings import WebSettings

PROBLEMS = REPO_ROOT / "problems"
PKG_204 = PROBLEMS / "204-rmsnorm"
PASSWORD = "correct horse battery"
# /metrics is for the allowed addresses (loopback) or this token; the test client is neither.
METRICS_TOKEN = "metrics-token-for-tests-0123456789abcdef"
# Tests register and log in by the dozen from one address (the test client's, or loopback): the
# per-address throttles of registrations and password checks are lifted unless a test sets them.
LIFTED_THROTTLES: dict[str, Any] = {"registrations_per_address": 10**6, "password_checks_per_address": 10**6}


def make_settings(tmp_path: Path, database_url: str | None = None, **overrides: Any) -> WebSettings:
    """Settings for one test: its own database, a fixed strong key, the local backend."""
    values: dict[str, Any] = {
        "database_url": database_url or f"sqlite:///{tmp_path / 'judge.db'}",
        "data_dir": tmp_path,
        "secret_key": "k" * 48,
        "problems_dir": PROBLEMS,
        "cache_dir": tmp_path / "expected-cache",
        "backend": "local",
        "allow_unsandboxed": True,
        "workers": 1,
        "poll_s": 0.05,
        "lease_s": 30.0,
        "heartbeat_s": 2.0,
        "metrics_token": METRICS_TOKEN,
        **LIFTED_THROTTLES,
    }
    values.update(overrides)
    return WebSettings(**values)


def make_client(settings: WebSettings) -> TestClient:
    """A client of a fresh app; use it as a context manager to run its workers."""
    return TestClient(create_app(settings), raise_server_exceptions=True)


def unique_name(prefix: str = "user") -> str:
    return f"{prefix}_{uuid.uuid4().hex[:8]}"


def register(
    client: TestClient, username: str | None = None, password: str = PASSWORD, scope: str | None = "full"
) -> tuple[str, str]:
    """Register and get an API token: (username, token). The token's scope is `full` (what the
    account may do, admin routes for an admin) unless asked otherwise; None: the server's default
    (`submit`, what the practice kit needs)."""
    username = username or unique_name()
    res = client.post("/api/auth/register", json={"username": username, "password": password})
    assert res.status_code == 201, res.text
    asked = {"scope": scope} if scope else {}
    res = client.post("/api/auth/token", json={"username": username, "password": password, **asked})
    assert res.status_code == 201, res.text
    return username, res.json()["token"]


def make_admin(client: TestClient) -> tuple[str, str]:
    """A new account made admin in the database: (its name, its API token)."""
    name, token = register(client, unique_name("admin"))
    with platform_of(client).factory() as session, session.begin():
        user = session.scalar(select(User).where(User.username == name))
        assert user is not None
        user.role = "admin"
    return name, token


def make_instructor(client: TestClient) -> tuple[str, str]:
    """A new account made instructor in the database: (its name, its API token)."""
    name, token = register(client, unique_name("teacher"))
    with platform_of(client).factory() as session, session.begin():
        user = session.scalar(select(User).where(User.username == name))
        assert user is not None
        user.role = "instructor"
    return name, token


def make_class(client: TestClient, instructor: str, members: Sequence[str] = (), name: str = "Class") -> int:
    """A class of `instructor`'s with `members` in it, written directly: its id."""
    with platform_of(client).factory() as session, session.begin():
        ids = dict(session.execute(select(User.username, User.id)).all())
        group = Group(name=name, instructor_id=ids[instructor], join_code=secrets.token_hex(4).upper())
        session.add(group)
        session.flush()
        session.add_all(Membership(class_id=group.id, user_id=ids[m]) for m in members)
        return group.id


def make_assignment(
    client: TestClient,
    class_id: int,
    problems: Sequence[str] = ("204",),
    opens_at: datetime | None = None,
    due_at: datetime | None = None,
    late_counts: bool = False,
    title: str = "Assignment",
) -> int:
    """An assignment of the class, written directly (by default open since an hour, due in a day)."""
    now = utcnow()
    with platform_of(client).factory() as session, session.begin():
        assignment = Assignment(
            class_id=class_id,
            title=title,
            opens_at=opens_at or now - timedelta(hours=1),
            due_at=due_at or now + timedelta(days=1),
            late_counts=late_counts,
        )
        session.add(assignment)
        session.flush()
        session.add_all(
            AssignmentProblem(assignment_id=assignment.id, problem_id=p, position=i)
            for i, p in enumerate(problems)
        )
        return assignment.id


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


METRICS_HEADERS = bearer(METRICS_TOKEN)


def submit(client: TestClient, token: str, code: str, problem_id: str = "204", mode: str = "submit") -> int:
    res = client.post(
        "/api/submissions", json={"problem_id": problem_id, "code": code, "mode": mode}, headers=bearer(token)
    )
    assert res.status_code == 202, res.text
    sub_id: int = res.json()["id"]
    return sub_id


def wait_done(client: TestClient, token: str, sub_id: int, timeout: float = 120.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        res = client.get(f"/api/submissions/{sub_id}", headers=bearer(token))
        assert res.status_code == 200, res.text
        body: dict[str, Any] = res.json()
        if body["status"] == "done":
            return body
        time.sleep(0.1)
    raise AssertionError(f"submission {sub_id} was not judged within {timeout} s")


def result_of(score: int, max_score: int = 100, verdict: str | None = None) -> StoredReport:
    """What a worker writes for a judgement of no cases: AC at full marks, else WA (or `verdict`)."""
    shown = Verdict(verdict) if verdict else Verdict.AC if score == max_score else Verdict.WA
    return StoredReport(problem="204", verdict=shown, score=score, max_score=max_score)


def read_204(path: str) -> str:
    return (PKG_204 / path).read_text()


@dataclass
class Server:
    """A `judge serve` process of a test: where it listens, its environment, the process."""

    url: str
    env: dict[str, str]
    process: subprocess.Popen[bytes]
    log: Path

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[1])


@contextmanager
def serving(tmp: Path, *args: str, **env: str) -> Iterator[Server]:
    """`judge serve` (with `args`) on 127.0.0.1 and a free port of its own, until the block ends."""
    port = free_port()
    full_env = {
        **os.environ,
        "JUDGE_DATABASE_URL": f"sqlite:///{tmp / 'site.db'}",
        "JUDGE_SECRET_KEY": "server-tests-0123456789-abcdefghijklmnop",
        "JUDGE_CACHE_DIR": os.environ.get("JUDGE_CACHE_DIR", str(tmp / "cache")),
        **{f"JUDGE_{name.upper()}": str(value) for name, value in LIFTED_THROTTLES.items()},
        **env,
    }
    log_path = tmp / f"serve-{port}.log"
    with log_path.open("w") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "judge", "serve", "--host", "127.0.0.1", "--port", str(port), *args],
            env=full_env,
            cwd=REPO_ROOT,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 60
            while True:
                try:
                    with urllib.request.urlopen(f"{url}/healthz", timeout=2) as res:
                        if res.status == 200:
                            break
                except OSError:
                    pass
                if process.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError("judge serve did not start:\n" + log_path.read_text()[-3000:])
                time.sleep(0.2)
            yield Server(url, full_env, process, log_path)
        finally:
            stop(process)


def stop(process: subprocess.Popen[Any]) -> None:
    """A server process asked to stop (SIGTERM, its clean-up runs), killed if it will not."""
    process.terminate()
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@contextmanager
def running_server(tmp: Path, **env: str) -> Iterator[tuple[str, dict[str, str]]]:
    """`judge serve` on a free port of its own: (its URL, the environment it runs with)."""
    with serving(tmp, **env) as server:
        yield server.url, server.env


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def platform_of(client: TestClient) -> Platform:
    """The platform behind a test client's app (its database, settings, workers)."""
    platform: Platform = cast(FastAPI, client.app).state.platform
    return platform


def error_of(res: Any, status: int, code: str) -> str:
    """An API failure's message, after checking its status, its one key and its code."""
    assert res.status_code == status, res.text
    body = res.json()
    assert set(body) == {"error"} and body["error"]["code"] == code, body
    message: str = body["error"]["message"]
    return message
