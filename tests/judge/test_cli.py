"""The `judge` command as a user runs it: exit codes, the JSON report, the table, validate and new."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.factories import make_package
from tests.paths import REPO_ROOT

pytestmark = pytest.mark.slow
PKG = REPO_ROOT / "problems" / "204-rmsnorm"


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return {**os.environ, "JUDGE_CACHE_DIR": str(tmp_path_factory.mktemp("cli-cache"))}


def judge_cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "judge", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO_ROOT,
        timeout=600,
    )


def test_run_json_ac_for_another_style(env: dict[str, str]) -> None:
    res = judge_cli(
        env, "run", "204", str(PKG / "solutions/accepted/einsum_type_as.py"), "--backend", "local", "--json"
    )
    assert res.returncode == 0, res.stderr
    report = json.loads(res.stdout)
    assert report["verdict"] == "AC" and report["score"] == report["max_score"] == 100
    assert report["problem"] == "204" and report["backend"] == "local"
    assert {"name", "public", "verdict", "score", "max_score", "time_ms", "message", "hint"} <= set(
        report["cases"][0]
    )


def test_run_table_wa_with_hint_and_exit_1(env: dict[str, str]) -> None:
    wrong = str(PKG / "solutions/wrong/gate_sigmoid.py")
    res = judge_cli(env, "run", "204", wrong, "--backend", "local")
    assert res.returncode == 1
    assert "gated_fp32" in res.stdout and "WA" in res.stdout
    assert re.search(r"得分：\d+/100", res.stdout) and "提示：" in res.stdout
    # One language at a time: the English table holds no Chinese (the warning is the backend's).
    en = judge_cli(env, "run", "204", wrong, "--backend", "local", "--lang", "en")
    score = re.search(r"Score: (\d+)/100", en.stdout)
    assert score is not None and 0 < int(score.group(1)) < 100 and "hint: " in en.stdout
    assert "silu(z) = z·sigmoid(z)" in en.stdout
    table = "\n".join(line for line in en.stdout.splitlines() if not line.lstrip().startswith("!"))
    assert not [ch for ch in table if "\u4e00" <= ch <= "\u9fff"], table


def test_run_public_cases_only(env: dict[str, str]) -> None:
    res = judge_cli(
        env, "run", str(PKG), str(PKG / "reference.py"), "--backend", "local", "--cases", "public", "--json"
    )
    report = json.loads(res.stdout)
    assert all(c["public"] for c in report["cases"]) and report["max_score"] < 100


def test_bad_input_gets_a_clear_error(env: dict[str, str], tmp_path: Path) -> None:
    missing = judge_cli(env, "run", "204", str(tmp_path / "nope.py"), "--backend", "local")
    assert missing.returncode == 2 and "no such file" in missing.stderr
    unknown = judge_cli(env, "run", "999", str(PKG / "reference.py"))
    assert unknown.returncode == 2 and "no problem '999'" in unknown.stderr
    binary = tmp_path / "bin.py"
    binary.write_bytes(b"\xff\xfe\x00")
    assert judge_cli(env, "run", "204", str(binary), "--backend", "local").returncode == 2


def test_validate_all_shipped_packages(env: dict[str, str]) -> None:
    """The problem set's bar: every package sound, each wrong solution caught with its own hint and
    each accepted alternative passing (validate checks both), and at least 13 packages.
    With an engine (always under CI) this runs in the Docker sandbox's default mode, the fork
    server, as the server judges; without one, on the local backend."""
    res = judge_cli(env, "validate", "--all", "--backend", "auto", "--json")
    results = json.loads(res.stdout)
    unsound = {Path(r["path"]).name: [c for c in r["checks"] if not c["ok"]] for r in results if not r["ok"]}
    assert not unsound and res.returncode == 0, json.dumps(unsound, ensure_ascii=False, indent=1)
    assert len(results) >= 13, [Path(r["path"]).name for r in results]
    for r in results:
        passed = {c["name"] for c in r["checks"] if c["ok"]}
        wrong = [n for n in passed if n.startswith("wrong/")]
        accepted = [n for n in passed if n.startswith("accepted/")]
        assert len(wrong) == r["counts"]["wrong"] >= 3 and len(accepted) == r["counts"]["accepted"] >= 1, r
        assert r["counts"]["public"] >= 2 and r["counts"]["hidden"] >= 6, r


def test_new_scaffold_is_guided_by_validate(env: dict[str, str], tmp_path: Path) -> None:
    made = judge_cli(env, "new", "950", "kv-cache", "--dir", str(tmp_path))
    assert made.returncode == 0, made.stderr
    assert "judge preview" in made.stdout and "--quick --watch" in made.stdout
    res = judge_cli(env, "validate", str(tmp_path / "950-kv-cache"), "--backend", "local", "--json")
    assert res.returncode == 1
    checks = {c["name"]: c for c in json.loads(res.stdout)[0]["checks"]}
    assert not checks["statements"]["ok"] and "TODO" in checks["statements"]["detail"]
    assert (
        not checks["coverage"]["ok"]
        and "wrong solutions (solutions/wrong/): 1 < 3" in checks["coverage"]["detail"]
    )
    assert not checks["problem.toml"]["ok"] and "chapter" in checks["problem.toml"]["detail"]
    assert checks["reference"]["ok"] and checks["starter"]["ok"]
    # The scaffold's own known mistake is caught and shown its hint; its cases kill the mutants.
    assert checks["wrong/times_three"]["ok"] and checks["mutants"]["ok"], checks["mutants"]["detail"]
    # Without an id: the folder's next free one.
    again = judge_cli(env, "new", "scaled-square", "--dir", str(tmp_path))
    assert again.returncode == 0 and (tmp_path / "951-scaled-square").is_dir(), again.stderr


@pytest.mark.docker
def test_run_in_docker_matches_local(env: dict[str, str], docker_backend: object) -> None:
    """The Done-when of the sandbox: `judge run 204 FILE --backend docker --json` judges right."""
    for path, verdict in (
        (PKG / "solutions/accepted/einsum_type_as.py", "AC"),
        (PKG / "solutions/wrong/one_plus_weight_in_bf16.py", "WA"),
    ):
        reports = {}
        for backend in ("docker", "local"):
            res = judge_cli(env, "run", "204", str(path), "--backend", backend, "--json")
            assert res.returncode == (0 if verdict == "AC" else 1), res.stderr
            reports[backend] = json.loads(res.stdout)
        docker, local = reports["docker"], reports["local"]
        assert docker["backend"] == "docker" and docker["verdict"] == verdict and docker["warnings"] == []
        strip = ("time_ms",)
        assert [{k: v for k, v in c.items() if k not in strip} for c in docker["cases"]] == [
            {k: v for k, v in c.items() if k not in strip} for c in local["cases"]
        ]
        # The learner's time is their cases', measured in the runner, not the container start.
        assert docker["time_ms"] == pytest.approx(sum(c["time_ms"] for c in docker["cases"]), abs=0.2)
        assert docker["elapsed_ms"] > docker["time_ms"]


@pytest.mark.docker
def test_validate_in_docker(env: dict[str, str], docker_backend: object) -> None:
    res = judge_cli(env, "validate", str(PKG), "--backend", "docker", "--json")
    assert res.returncode == 0, res.stdout + res.stderr
    (result,) = json.loads(res.stdout)
    assert result["ok"] is True


def test_docker_backend_without_an_engine_is_a_clear_error(env: dict[str, str]) -> None:
    res = judge_cli(
        {**env, "DOCKER_HOST": "unix:///tmp/no-docker-engine-here.sock"},
        "run",
        "204",
        str(PKG / "reference.py"),
        "--backend",
        "docker",
    )
    assert res.returncode == 2
    assert res.stderr.startswith("judge run: no Docker engine answers") and "Traceback" not in res.stderr


@pytest.mark.docker
def test_image_build_is_skipped_when_built(env: dict[str, str], docker_backend: object) -> None:
    res = judge_cli(env, "image", "build", "--offline")
    assert res.returncode == 0, res.stderr
    assert "exists; nothing to build" in res.stdout
    assert res.stdout.strip().splitlines()[-1] == f"runtime image: {docker_backend.image}"  # type: ignore[attr-defined]


def test_a_judge_error_is_said_in_one_line(env: dict[str, str], tmp_path: Path) -> None:
    """The settings' errors and a command's (here a trusted-run error: the kit of a package whose
    reference fails its own cases, a traceback before the root) are said by `judge` in one place."""
    settings = judge_cli(env, "--config", str(tmp_path / "absent.toml"), "validate", "--all")
    assert settings.returncode == 2, settings.stderr
    assert settings.stderr.startswith("judge: the settings cannot be used: cannot read the settings file")
    broken = make_package(tmp_path / "problems", reference="def f(x):\n    raise RuntimeError('broken')\n")
    kit = judge_cli(
        env, "kit", "--out", str(tmp_path / "kit"), "--problems", str(broken), "--backend", "local"
    )
    assert kit.returncode == 2, kit.stderr
    assert "\njudge kit: problem 901: reference.py fails cases:\n" in kit.stderr
    assert "Traceback (most recent call last)" not in kit.stderr
