"""The practice kit from the web: /kit.zip from a real server, then `judge.py ID --submit` back to it
for the official score, and the errors a learner can meet on the way."""

from __future__ import annotations

import http.cookiejar
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

from judge.authoring.kit import build_kit
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
        # The course scripts' practice checkpoint, beside the package (217's, though 217 is not served).
        assert {"practice/tiny-qwen3.5/config.json", "practice/tiny-qwen3.5/model.safetensors"} <= set(names)
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
    assert "服务器拒绝了令牌" in res.stderr and f"{served.url}/settings" in res.stderr
    english = kit_judge(served, "204", "--submit", "--lang", "en", token="jdg_not_a_real_token")
    assert "refused your token" in english.stderr and "令牌" not in english.stderr
    no_token = kit_judge(served, "204", "--submit", token="")
    assert no_token.returncode == 2 and "JUDGE_TOKEN" in no_token.stderr


def test_offline_says_so(served: Served) -> None:
    res = kit_judge(served, "204", "--submit", "--server", f"http://127.0.0.1:{free_port()}")
    assert res.returncode == 2 and "连不上服务器" in res.stderr and "离线" in res.stderr


def test_an_old_kit_is_told_to_update(served: Served) -> None:
    meta_path = served.kit / "207-softmax-cross-entropy" / "problem.json"
    meta = json.loads(meta_path.read_text())
    meta["version"] = "0" * 64  # as if the problem changed on the server after this kit was made
    meta_path.write_text(json.dumps(meta))
    res = kit_judge(served, "207", "--submit")
    assert res.returncode == 2
    assert "比服务器上的旧" in res.stderr and f"{served.url}/kit.zip" in res.stderr


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

    monkeypatch.setattr("web.problems.kitstore.build_kit", counted_build)
    public = "https://judge.example.edu"
    settings = make_settings(tmp_path, problems_dir=problems, workers=1, public_url=public + "/")
    with make_client(settings) as client:
        # Asking how far the build got starts it (the page asks, then polls).
        assert client.get("/api/kit/status").json()["ready"] is False
        hosts = [f"attacker-{i}.example:{8000 + i}" for i in range(16)]
        with ThreadPoolExecutor(4) as pool:
            answers = list(pool.map(lambda host: client.get("/kit.zip", headers={"Host": host}), hosts))
        assert [a.status_code for a in answers] == [200] * len(hosts)
        assert len({a.content for a in answers}) == 1
        assert builds == [public]
        platform: Platform = cast(FastAPI, client.app).state.platform
        assert platform.kit.cache.builds == 1
        assert client.get("/api/kit/status").json() == {"ready": True, "done": 1, "total": 1, "failed": None}
    archive = zipfile.ZipFile(io.BytesIO(answers[0].content))
    assert json.loads(archive.read("practice/kit.json"))["server"] == public
    # A restarted server reads the kit it built back from its cache folder: no second build.
    with make_client(settings) as client:
        assert client.get("/kit.zip").content == answers[0].content
        platform = cast(FastAPI, client.app).state.platform
        assert platform.kit.cache.builds == 0 and builds == [public]
    for name in archive.namelist():
        assert b"attacker-" not in archive.read(name), name


def wait_for_verdict(served: Served, submission: int) -> dict[str, Any]:
    for _ in range(60):
        sub = api(served.url, "GET", f"/api/submissions/{submission}?wait=20", token=served.token)
        assert isinstance(sub, dict)
        if sub["status"] == "done":
            return sub
    raise AssertionError(f"no verdict for #{submission}")


def test_the_kit_carries_the_learners_accepted_code(served: Served) -> None:
    """Downloaded logged in with `mine`, and pulled by `judge.py --pull`, which never replaces a
    file the learner changed without --force (no terminal here to ask on)."""
    accepted = CORRECT + "\n# accepted on the site\n"
    sub = api(
        served.url,
        "POST",
        "/api/submissions",
        {"problem_id": "204", "code": accepted, "mode": "submit"},
        token=served.token,
    )
    assert isinstance(sub, dict)
    assert wait_for_verdict(served, int(sub["id"]))["verdict"] == "AC"
    starter = (PROBLEMS / "204-rmsnorm" / "starter.py").read_text()

    # The download: logged in (a session cookie) and asking for their code; anonymous, the starter.
    jar = http.cookiejar.CookieJar()
    browser = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    login = urllib.request.Request(
        f"{served.url}/api/auth/login",
        data=json.dumps({"username": served.username, "password": PASSWORD}).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    browser.open(login, timeout=30).read()
    with browser.open(f"{served.url}/kit.zip?mine=1", timeout=600) as res:
        mine = zipfile.ZipFile(io.BytesIO(res.read()))
    assert mine.read("practice/qwen/norm.py").decode() == accepted
    assert (
        mine.read("practice/qwen/loss.py").decode()
        == (PROBLEMS / "207-softmax-cross-entropy" / "starter.py").read_text()
    )
    assert len(mine.namelist()) == len(set(mine.namelist()))
    with urllib.request.urlopen(f"{served.url}/kit.zip?mine=1", timeout=600) as res:
        anonymous = zipfile.ZipFile(io.BytesIO(res.read()))
    assert anonymous.read("practice/qwen/norm.py").decode() == starter

    # --pull: a file the learner changed is kept, and they are told so, in one language.
    norm = served.kit / "qwen" / "norm.py"
    norm.write_text("# my own work in progress\n")
    kept = kit_judge(served, "--pull")
    assert kept.returncode == 0, kept.stdout + kept.stderr
    assert norm.read_text() == "# my own work in progress\n"
    assert "保留了你本地改过的 practice/qwen/norm.py" in kept.stdout and "--force" in kept.stdout
    assert "207：服务器上还没有你通过的提交" in kept.stdout and "kept" not in kept.stdout
    english = kit_judge(served, "204", "--pull", "--lang", "en")
    assert "204: kept your changed practice/qwen/norm.py" in english.stdout, english.stdout
    assert "207" not in english.stdout  # only the problem asked for
    forced = kit_judge(served, "204", "--pull", "--force")
    assert forced.returncode == 0 and norm.read_text() == accepted, forced.stdout + forced.stderr
    assert f"#{sub['id']}" in forced.stdout
    # A file still holding its starter is no one's work: replaced without asking.
    norm.write_text(starter)
    assert kit_judge(served, "--pull").returncode == 0 and norm.read_text() == accepted
    again = kit_judge(served, "204", "--pull", "--lang", "en")
    assert "already holds your accepted code" in again.stdout, again.stdout
