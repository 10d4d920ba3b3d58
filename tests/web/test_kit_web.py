"""The practice kit from the web: /kit.zip from a real server, then `judge.py ID --submit` back to it
for the official score, and the errors a learner can meet on the way."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
import urllib.request
import zipfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import pytest
from fastapi import FastAPI

from judge.kit import build_kit
from tests.web.factories import (
    PASSWORD,
    PROBLEMS,
    free_port,
    make_client,
    make_settings,
    read_204,
    running_server,
    unique_name,
)
from web.platform import Platform

pytestmark = pytest.mark.slow

CORRECT = read_204("solutions/accepted/div_sqrt_sum.py")


@dataclass
class Served:
    url: str
    kit: Path  # practice/, unpacked from the download
    token: str
    username: str


def api(url: str, method: str, path: str, body: dict[str, object] | None = None, token: str = "") -> object:
    request = urllib.request.Request(
        url + path,
        data=json.dumps(body).encode() if body is not None else None,
        method=method,
        headers={
            "Content-Type": "application/json",
            **({"Authorization": f"Bearer {token}"} if token else {}),
        },
    )
    with urllib.request.urlopen(request, timeout=30) as res:
        return json.loads(res.read() or b"null")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    tmp = tmp_path_factory.mktemp("kit-web")
    # Two problems keep the kit (and the trusted runs behind it) small.
    problems = tmp / "problems"
    for name in ("204-rmsnorm", "207-softmax-cross-entropy"):
        shutil.copytree(PROBLEMS / name, problems / name)
    with running_server(tmp, JUDGE_PROBLEMS_DIR=str(problems), JUDGE_WORKERS="1") as (url, _env):
        with urllib.request.urlopen(f"{url}/kit.zip", timeout=600) as res:
            assert res.headers["Content-Type"] == "application/zip"
            archive = zipfile.ZipFile(io.BytesIO(res.read()))
        names = archive.namelist()
        assert "practice/judge.py" in names and "practice/qwen/norm.py" in names
        assert not [n for n in names if "reference" in n or "/solutions/" in n]
        archive.extractall(tmp / "unpacked")
        username = unique_name("kit")
        api(url, "POST", "/api/auth/register", {"username": username, "password": PASSWORD})
        token = api(url, "POST", "/api/auth/token", {"username": username, "password": PASSWORD})
        # The default scope, the one the settings page makes: the kit needs no more.
        assert isinstance(token, dict) and token["scope"] == "submit"
        yield Served(url, tmp / "unpacked" / "practice", str(token["token"]), username)


def kit_judge(served: Served, *args: str, token: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(served.kit.parent),
        "JUDGE_TOKEN": served.token if token is None else token,
    }
    return subprocess.run(
        [sys.executable, str(served.kit / "judge.py"), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )


def test_the_kit_points_at_its_server(served: Served) -> None:
    kit = json.loads((served.kit / "kit.json").read_text())
    assert kit["server"] == served.url
    assert [p["id"] for p in kit["problems"]] == ["204", "207"]


def test_submit_records_a_scored_submission(served: Served) -> None:
    (served.kit / "qwen" / "norm.py").write_text(CORRECT)
    res = kit_judge(served, "204", "--submit")
    assert res.returncode == 0, res.stdout + res.stderr
    assert "100/100" in res.stdout and "正式评测" in res.stdout
    mine = api(served.url, "GET", "/api/submissions?problem_id=204", token=served.token)
    assert isinstance(mine, list) and mine[0]["mode"] == "submit" and mine[0]["score"] == 100
    scores = api(served.url, "GET", "/api/me/scores", token=served.token)
    assert isinstance(scores, list) and scores[0]["best_score"] == 100
    # The settings page's other way: the token in ~/.config/llm-judge/token.
    token_file = served.kit.parent / ".config" / "llm-judge" / "token"
    token_file.parent.mkdir(parents=True, exist_ok=True)
    token_file.write_text(served.token + "\n")
    try:
        assert kit_judge(served, "204", "--submit", token="").returncode == 0
    finally:
        token_file.unlink()
    # ...and the same code judged locally agrees on the public cases.
    local = kit_judge(served, "204")
    assert local.returncode == 0, local.stdout + local.stderr


def test_a_wrong_token_is_refused_plainly(served: Served) -> None:
    res = kit_judge(served, "204", "--submit", token="jdg_not_a_real_token")
    assert res.returncode == 2
    assert "refused your token" in res.stderr and f"{served.url}/settings" in res.stderr
    no_token = kit_judge(served, "204", "--submit", token="")
    assert no_token.returncode == 2 and "JUDGE_TOKEN" in no_token.stderr


def test_offline_says_so(served: Served) -> None:
    res = kit_judge(served, "204", "--submit", "--server", f"http://127.0.0.1:{free_port()}")
    assert res.returncode == 2 and "cannot reach" in res.stderr and "offline" in res.stderr


def test_an_old_kit_is_told_to_update(served: Served) -> None:
    meta_path = served.kit / "207-softmax-cross-entropy" / "problem.json"
    meta = json.loads(meta_path.read_text())
    meta["version"] = "0" * 64  # as if the problem changed on the server after this kit was made
    meta_path.write_text(json.dumps(meta))
    res = kit_judge(served, "207", "--submit")
    assert res.returncode == 2
    assert "older than the server's" in res.stderr and f"{served.url}/kit.zip" in res.stderr


def test_the_kit_is_built_once_and_names_the_public_url_not_the_host(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new Host header on every download neither rebuilds the kit nor gets written into it."""
    problems = tmp_path / "problems"
    shutil.copytree(PROBLEMS / "204-rmsnorm", problems / "204-rmsnorm")
    builds: list[str] = []

    def counted_build(*args: Any, **kwargs: Any) -> Path:
        builds.append(str(args[-1]))  # the server URL it writes into kit.json
        return build_kit(*args, **kwargs)

    monkeypatch.setattr("web.problems.kit.build_kit", counted_build)
    public = "https://judge.example.edu"
    settings = make_settings(tmp_path, problems_dir=problems, workers=1, public_url=public + "/")
    with make_client(settings) as client:
        hosts = [f"attacker-{i}.example:{8000 + i}" for i in range(16)]
        with ThreadPoolExecutor(4) as pool:
            answers = list(pool.map(lambda host: client.get("/kit.zip", headers={"Host": host}), hosts))
        assert [a.status_code for a in answers] == [200] * len(hosts)
        assert len({a.content for a in answers}) == 1
        assert builds == [public]
        platform: Platform = cast(FastAPI, client.app).state.platform
        assert platform.kit.builds == 1
    archive = zipfile.ZipFile(io.BytesIO(answers[0].content))
    assert json.loads(archive.read("practice/kit.json"))["server"] == public
    for name in archive.namelist():
        assert b"attacker-" not in archive.read(name), name
