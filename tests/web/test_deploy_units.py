"""The operator's files under deploy/: systemd accepts the units, their commands are commands
`judge` has, and every setting of the example environment file is one the platform reads."""

from __future__ import annotations

import configparser
import os
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from judge.cli import build_parser
from judge.settings import SandboxSettings
from tests.paths import REPO_ROOT
from web.settings import WebSettings

DEPLOY = REPO_ROOT / "deploy"
UNITS = sorted((DEPLOY / "systemd").glob("*.service"))
ENV_FILE = DEPLOY / "judge.env.example"
JUDGE = "/srv/llm-judge/.venv/bin/judge"


def unit(path: Path) -> configparser.ConfigParser:
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read(path)
    return parser


def test_there_is_a_web_unit_and_a_worker_template() -> None:
    assert [u.name for u in UNITS] == ["llm-judge-web.service", "llm-judge-worker@.service"]


@pytest.mark.parametrize("path", UNITS, ids=lambda p: p.name)
def test_each_unit_runs_judge_commands_that_exist(path: Path) -> None:
    service = unit(path)["Service"]
    commands = [service[key] for key in ("ExecStartPre", "ExecStart") if key in service]
    assert commands
    parser = build_parser()
    for command in commands:
        argv = shlex.split(command)
        assert argv[0] == JUDGE, command
        args = parser.parse_args(argv[1:])  # an unknown command or flag exits here
        assert callable(args.func)
    assert service["EnvironmentFile"] == "/etc/llm-judge/judge.env"
    assert service["Restart"] == "always"


@pytest.mark.parametrize("path", UNITS, ids=lambda p: p.name)
def test_systemd_accepts_each_unit(path: Path, tmp_path: Path) -> None:
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        if os.environ.get("JUDGE_REQUIRE_DOCKER") == "1":  # CI: this machine has systemd
            pytest.fail("systemd-analyze is missing")
        pytest.skip("no systemd-analyze on this machine")
    # The unit as installed, but with this checkout's judge and the example environment file.
    text = path.read_text().replace(JUDGE, str(REPO_ROOT / ".venv" / "bin" / "judge"))
    text = text.replace("/etc/llm-judge/judge.env", str(ENV_FILE))
    name = path.name.replace("@.", "@1.")
    (tmp_path / path.name).write_text(text)
    if name != path.name:
        (tmp_path / name).symlink_to(tmp_path / path.name)
    done = subprocess.run([analyze, "verify", str(tmp_path / name)], capture_output=True, text=True)
    # systemd only warns about a value it cannot parse: any word from it is a defect.
    assert done.returncode == 0 and not done.stderr.strip() and not done.stdout.strip(), done


def test_every_setting_of_the_example_environment_is_read_by_the_platform() -> None:
    fields = set(WebSettings.model_fields)
    sandbox = set(SandboxSettings.model_fields)
    keys = [line.split("=", 1)[0] for line in ENV_FILE.read_text().splitlines() if line and line[0] != "#"]
    assert "JUDGE_DATABASE_URL" in keys
    for key in keys:
        assert key.startswith("JUDGE_"), key
        name = key.removeprefix("JUDGE_").lower()
        if name.startswith("sandbox__"):
            assert name.removeprefix("sandbox__") in sandbox, key
        else:
            assert name in fields, key
