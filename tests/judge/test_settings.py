"""The settings tree: sources in order (arguments, environment, file, defaults), the file's
tables checked key by key, old names refused, and every setting documented."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from judge.settings import CODE_ROOT, JudgeSettings, SandboxSettings, SettingsError, shipped_problems
from web.settings import WebSettings

DOC = (CODE_ROOT / "docs" / "settings.md").read_text(encoding="utf-8")


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "judge.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_the_environment_beats_the_file_and_arguments_beat_both(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = write(
        tmp_path, '[judge]\nbackend = "docker"\nstartup_s = 5\n[sandbox]\nmode = "warm"\npool_size = 3\n'
    )
    monkeypatch.setenv("JUDGE_SANDBOX__POOL_SIZE", "5")
    monkeypatch.setenv("JUDGE_STARTUP_S", "7")
    s = JudgeSettings(config=config, backend="local")
    assert (s.backend, s.startup_s, s.sandbox.mode, s.sandbox.pool_size) == ("local", 7.0, "warm", 5)


def test_judge_toml_in_the_working_folder_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, '[judge]\nbackend = "local"\n')
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("JUDGE_CONFIG", raising=False)
    assert JudgeSettings().backend == "local"


def test_the_judge_ignores_the_web_table_and_the_platform_reads_it(tmp_path: Path) -> None:
    config = write(tmp_path, '[web]\nworkers = 0\ndata_dir = "data"\n')
    assert JudgeSettings(config=config).backend == "auto"
    web = WebSettings(config=config)
    assert web.workers == 0 and web.data_dir.is_absolute()


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ('[judge]\nbackned = "local"\n', "[judge] has no setting 'backned'"),
        ("[sandbox]\nmodes = 1\n", "[sandbox] has no setting 'modes'"),
        ('backend = "local"\n', "unknown table or key 'backend'"),
        ("[judge\n", "is not valid TOML"),
    ],
)
def test_a_bad_file_is_refused_by_name(tmp_path: Path, text: str, words: str) -> None:
    with pytest.raises(SettingsError) as raised:
        JudgeSettings(config=write(tmp_path, text))
    assert words in str(raised.value)


def test_a_missing_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(SettingsError, match="cannot read the settings file"):
        JudgeSettings(config=tmp_path / "nope.toml")


def test_old_names_are_refused_with_the_new_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUDGE_SANDBOX_MODE", "cold")
    with pytest.raises(SettingsError, match="JUDGE_SANDBOX_MODE is now JUDGE_SANDBOX__MODE"):
        JudgeSettings()


def test_relative_sqlite_paths_are_taken_from_the_data_folder(tmp_path: Path) -> None:
    web = WebSettings(data_dir=tmp_path, database_url="sqlite:///sub/judge.db")
    assert web.sqlalchemy_url() == f"sqlite:///{tmp_path}/sub/judge.db"


def test_the_shipped_problems_are_found() -> None:
    assert (shipped_problems() / "204-rmsnorm" / "problem.toml").is_file()


def test_every_setting_is_documented() -> None:
    documented = set(re.findall(r"^\| `([a-z_]+)` \|", DOC, flags=re.MULTILINE))
    names = (
        set(JudgeSettings.model_fields) | set(WebSettings.model_fields) | set(SandboxSettings.model_fields)
    )
    names -= {"config", "sandbox"}  # the file itself (--config, JUDGE_CONFIG) and the section
    assert names - documented == set(), "add these to docs/settings.md"
    assert documented - names == set(), "docs/settings.md names settings that do not exist"


def judge_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("JUDGE_")}
    return subprocess.run(
        [sys.executable, "-m", "judge", *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=120
    )


def test_the_command_line_loads_the_file_once_and_refuses_bad_values(tmp_path: Path) -> None:
    bad = write(tmp_path, '[web]\nworkers = "many"\n')
    res = judge_cli("db", "upgrade", "--config", str(bad), cwd=tmp_path)
    assert res.returncode == 2 and "setting workers: Input should be a valid integer" in res.stderr
    good = tmp_path / "good.toml"
    good.write_text(f'[web]\ndata_dir = "{tmp_path / "data"}"\n', encoding="utf-8")
    res = judge_cli("--config", str(good), "db", "upgrade", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "data" / "judge.db").is_file()  # the web command got the file's settings
