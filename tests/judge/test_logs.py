"""Logging is configured once, with time and level, by every `judge` command (--log-level before
or after the command), and `judge serve` hands the same format to uvicorn; `judge --version`."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from judge import __version__
from judge.cli import build_parser
from judge.logs import logging_config
from tests.factories import make_package
from tests.paths import REPO_ROOT

LINE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} (DEBUG|INFO|WARNING|ERROR) [\w.]+: \S")
EMIT = """
import logging, sys
from judge.logs import configure_logging
configure_logging(sys.argv[1])
for name in ("judge.core.grading", "sandbox.pool", "web.judging.worker", "uvicorn.error", "urllib3"):
    log = logging.getLogger(name)
    log.debug("%s says debug", name)
    log.info("%s says info", name)
    log.warning("%s says warning", name)
"""


def logged(level: str) -> list[str]:
    res = subprocess.run(
        [sys.executable, "-c", EMIT, level], capture_output=True, text=True, cwd=REPO_ROOT, timeout=60
    )
    assert res.returncode == 0 and res.stdout == "", res.stderr
    lines = res.stderr.splitlines()
    assert all(LINE.match(line) for line in lines), lines
    return [line.split(" ", 2)[2] for line in lines]  # without the time


def test_levels_and_the_format_in_a_fresh_process() -> None:
    ours = ("judge.core.grading", "sandbox.pool", "web.judging.worker", "uvicorn.error")
    assert logged("debug") == [
        *(
            f"{kind} {name}: {name} says {kind.lower()}"
            for name in ours
            for kind in ("DEBUG", "INFO", "WARNING")
        ),
        # A library's debug chatter (every connection to the engine) stays out even at debug.
        "INFO urllib3: urllib3 says info",
        "WARNING urllib3: urllib3 says warning",
    ]
    # At info, a library says only its warnings (alembic's set-up notes are not the operator's).
    assert logged("info") == [
        *(f"{kind} {name}: {name} says {kind.lower()}" for name in ours for kind in ("INFO", "WARNING")),
        "WARNING urllib3: urllib3 says warning",
    ]
    assert logged("warning") == [f"WARNING {name}: {name} says warning" for name in (*ours, "urllib3")]


def test_an_unknown_level_is_refused() -> None:
    with pytest.raises(ValueError, match="not one of debug, info, warning, error"):
        logging_config("verbose")


def test_log_level_before_or_after_any_command() -> None:
    parser = build_parser()
    for argv, level in [
        (["run", "204", "s.py"], None),  # not given: main() takes the log_level setting
        (["--log-level", "warning", "run", "204", "s.py"], "warning"),
        (["run", "204", "s.py", "--log-level", "debug"], "debug"),
        # the web platform's commands come from an entry point, and take it too
        (["serve", "--log-level", "debug"], "debug"),
        (["--log-level", "error", "worker"], "error"),
        (["admin", "create", "root", "--log-level", "debug"], "debug"),
        (["--log-level", "error", "image", "build", "--log-level", "debug"], "debug"),
    ]:
        assert parser.parse_args(argv).log_level == level, argv


def judge_cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "judge", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO_ROOT,
        timeout=120,
    )


def test_version_and_a_bad_level() -> None:
    res = judge_cli(dict(os.environ), "--version")
    assert res.returncode == 0 and res.stdout == f"judge {__version__}\n", res.stderr
    res = judge_cli(dict(os.environ), "new", "301", "x", "--log-level", "loud")
    assert res.returncode == 2 and "invalid choice: 'loud'" in res.stderr


def web_env(tmp_path: Path) -> dict[str, str]:
    problems = tmp_path / "problems"
    problems.mkdir()
    make_package(problems)
    return {
        "JUDGE_PROBLEMS_DIR": str(problems),
        "JUDGE_BACKEND": "local",
        "JUDGE_ALLOW_UNSANDBOXED": "1",
        "JUDGE_WORKERS": "1",
    }


@pytest.mark.slow
def test_serve_logs_uvicorn_in_the_same_format(tmp_path: Path) -> None:
    from tests.web.factories import serving  # the web platform, for this test only

    # The flag reaches uvicorn: its info lines come although the setting says warning.
    env = {**web_env(tmp_path), "JUDGE_LOG_LEVEL": "warning"}
    with (
        serving(tmp_path, "--log-level", "info", "--access-log", **env) as server,
        urllib.request.urlopen(f"{server.url}/healthz", timeout=10) as res,
    ):
        assert res.status == 200
    lines = [line for line in server.log.read_text().splitlines() if line.strip()]
    assert lines and [line for line in lines if not LINE.match(line)] == [], lines
    text = "\n".join(lines)
    assert f"INFO web.serving: judge serve: {server.url}, public URL" in text
    assert f"INFO uvicorn.error: Uvicorn running on {server.url}" in text
    assert re.search(r'INFO uvicorn\.access: 127\.0\.0\.1:\d+ - "GET /healthz HTTP/1\.1" 200', text), text
    assert "WARNING web.serving: " in text  # the local backend on a server is said, as a warning


@pytest.mark.slow
@pytest.mark.parametrize(("setting", "flag"), [("warning", "info"), ("warning", None)])
def test_worker_logs_at_the_flags_level_else_the_settings(
    tmp_path: Path, setting: str, flag: str | None
) -> None:
    env = {
        **os.environ,
        **web_env(tmp_path),
        "JUDGE_DATABASE_URL": f"sqlite:///{tmp_path / 'judge.db'}",
        "JUDGE_CACHE_DIR": str(tmp_path / "cache"),
        "JUDGE_LOG_LEVEL": setting,
    }
    assert judge_cli(env, "db", "upgrade").returncode == 0
    log_path = tmp_path / "worker.log"
    with log_path.open("w") as log:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "judge",
                "worker",
                "--threads",
                "1",
                *(["--log-level", flag] if flag else []),
            ],
            env=env,
            cwd=REPO_ROOT,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    # Started: at info its own line says so; at warning, the local backend's warning comes first.
    started = "judge worker: 1 threads" if flag == "info" else "WARNING web.cli: "
    try:
        deadline = time.monotonic() + 60
        while started not in log_path.read_text():
            assert proc.poll() is None and time.monotonic() < deadline, log_path.read_text()
            time.sleep(0.2)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    lines = [line for line in log_path.read_text().splitlines() if line.strip()]
    assert [line for line in lines if not LINE.match(line)] == [], lines
    infos = [line for line in lines if " INFO " in line]
    if flag == "info":
        assert any("INFO web.cli: judge worker: 1 threads on the local backend" in line for line in infos)
        assert "INFO web.cli: judge worker: stopping" in lines[-1]
    else:
        assert infos == [], lines
