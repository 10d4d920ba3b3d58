"""The web platform's commands as an operator runs them: db upgrade, admin create, problems sync,
and `judge serve` answering HTTP on a real socket."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from sqlalchemy import select

from judge.authoring.package import all_problem_dirs
from tests.paths import REPO_ROOT
from tests.web.factories import PROBLEMS, free_port
from web.auth.models import User
from web.db import make_engine, make_sessionmaker
from web.problems.models import ProblemVersion

pytestmark = pytest.mark.slow


def env_for(tmp_path: Path, **extra: str) -> dict[str, str]:
    return {
        **os.environ,
        "JUDGE_DATABASE_URL": f"sqlite:///{tmp_path / 'ops.db'}",
        "JUDGE_SECRET_KEY": "0123456789abcdef0123456789abcdef-ops",
        "JUDGE_CACHE_DIR": str(tmp_path / "cache"),
        **extra,
    }


def judge(env: dict[str, str], *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "judge", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO_ROOT,
        timeout=120,
    )


def test_db_upgrade_admin_create_and_problems_sync(tmp_path: Path) -> None:
    env = env_for(tmp_path)
    res = judge(env, "db", "upgrade")
    assert res.returncode == 0 and "newest migration" in res.stdout, res.stderr
    res = judge(env, "admin", "create", "root_admin", "--password-stdin", stdin="a strong password\n")
    assert res.returncode == 0 and "created admin root_admin" in res.stdout, res.stderr
    res = judge(env, "admin", "create", "x", "--password-stdin", stdin="short\n")
    assert res.returncode == 2 and "at least 8 characters" in res.stderr
    res = judge(env, "admin", "create", "admin", "--password-stdin", stdin="aaaaaaaa\n")
    assert res.returncode == 2 and "too easy to guess (repeated)" in res.stderr
    res = judge(env, "problems", "sync")
    shipped = len(all_problem_dirs(PROBLEMS))
    assert res.returncode == 0 and res.stdout.startswith(f"{shipped} problems"), res.stderr
    engine = make_engine(env["JUDGE_DATABASE_URL"])
    try:
        with make_sessionmaker(engine)() as s:
            admin = s.scalar(select(User).where(User.username == "root_admin"))
            assert admin is not None and admin.role == "admin" and admin.password_hash.startswith("$argon2")
            query = select(ProblemVersion.problem_id).where(ProblemVersion.current.is_(True))
            current = s.scalars(query).all()
            assert sorted(current) == sorted(d.name.split("-")[0] for d in all_problem_dirs(PROBLEMS))
    finally:
        engine.dispose()


def test_admin_create_refuses_an_existing_name_unless_told_to_promote(tmp_path: Path) -> None:
    env = env_for(tmp_path)
    res = judge(env, "admin", "create", "learner_1", "--password-stdin", stdin="a strong password\n")
    assert res.returncode == 0, res.stderr
    engine = make_engine(env["JUDGE_DATABASE_URL"])
    try:
        with make_sessionmaker(engine)() as s, s.begin():
            user = s.scalar(select(User).where(User.username == "learner_1"))
            assert user is not None
            user.role = "user"  # a learner's account, as registration makes it
            first_hash = user.password_hash
        # Any spelling of an existing name: one line on stderr, exit 2, before any password is
        # read, and the account is untouched.
        res = judge(env, "admin", "create", "LEARNER_1", "--password-stdin", stdin="another strong one\n")
        assert res.returncode == 2 and res.stdout == ""
        assert (
            res.stderr.strip().count("\n") == 0
            and "already exists" in res.stderr
            and "--promote" in res.stderr
        )
        with make_sessionmaker(engine)() as s:
            user = s.scalar(select(User).where(User.username == "learner_1"))
            assert user is not None and user.role == "user" and user.password_hash == first_hash
        # --promote: made an admin with the new password, and told so.
        args = ("admin", "create", "learner_1", "--promote", "--password-stdin")
        res = judge(env, *args, stdin="another strong one\n")
        assert res.returncode == 0 and "learner_1 is now an admin" in res.stdout, res.stderr
        with make_sessionmaker(engine)() as s:
            user = s.scalar(select(User).where(User.username == "learner_1"))
            assert user is not None and user.role == "admin" and user.password_hash != first_hash
        # --promote on a new name simply creates the admin.
        res = judge(
            env,
            "admin",
            "create",
            "fresh_admin",
            "--promote",
            "--password-stdin",
            stdin="a strong password\n",
        )
        assert res.returncode == 0 and "created admin fresh_admin" in res.stdout, res.stderr
    finally:
        engine.dispose()


def test_serve_answers_on_its_port_and_refuses_unsafe_settings(tmp_path: Path) -> None:
    env = env_for(tmp_path, JUDGE_BACKEND="local", JUDGE_WORKERS="1")
    # Serving others (any address) on the local backend is refused, with one clear line.
    res = judge(env, "serve", "--host", "0.0.0.0", "--port", str(free_port()))
    assert res.returncode == 2 and "JUDGE_ALLOW_UNSANDBOXED=1" in res.stderr and "Traceback" not in res.stderr
    weak = {**env, "JUDGE_PRODUCTION": "1", "JUDGE_SECRET_KEY": "changeme"}
    res = judge(weak, "serve", "--port", str(free_port()))
    assert res.returncode == 2 and "JUDGE_SECRET_KEY is weak" in res.stderr
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "judge", "serve", "--port", str(port)],
        env=env,
        cwd=REPO_ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2) as r:
                    health = json.loads(r.read())
                break
            except OSError:
                assert time.monotonic() < deadline, "judge serve did not answer within 60 s"
                time.sleep(0.3)
        assert (
            health["status"] == "ok"
            and health["backend"] == "local"
            and health["problems"] == len(all_problem_dirs(PROBLEMS))
        )
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/openapi.json", timeout=5) as r:
            paths = json.loads(r.read())["paths"]
        assert {"/api/submissions", "/api/leaderboard", "/api/me/scores"} <= set(paths)
    finally:
        proc.terminate()
        # uvicorn shuts down gracefully, then re-raises SIGTERM so the exit status says why.
        assert proc.wait(timeout=30) in (0, -signal.SIGTERM)


def test_serve_on_every_address_asks_for_the_public_url(tmp_path: Path) -> None:
    """The kit needs the address learners use; listening on 0.0.0.0, `judge serve` cannot know it."""
    port = free_port()
    log = tmp_path / "serve.log"
    with log.open("w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "judge", "serve", "--host", "0.0.0.0", "--port", str(port)],
            env=env_for(tmp_path, JUDGE_WORKERS="0"),
            cwd=REPO_ROOT,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2):
                    break
            except OSError:
                assert time.monotonic() < deadline, "judge serve did not answer within 60 s"
                time.sleep(0.3)
        printed = log.read_text()
        assert "JUDGE_PUBLIC_URL" in printed and f"http://127.0.0.1:{port}" in printed, printed
    finally:
        proc.terminate()
        proc.wait(timeout=30)
