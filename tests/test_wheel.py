"""The package as a user installs it: a wheel built from this tree, installed (not editable)
in a fresh virtual environment, run from a folder outside the clone.

Everything `judge` reads at run time (templates, catalogs, the built front end, migrations,
the Dockerfile, the shipped problems) must travel in the wheel; a file that only a clone has
fails here. The fresh environment takes the dependencies from the one running the tests
(a path entry to its site-packages, whose own .pth files, among them the editable install of
this tree, are not processed), so the wheel is the only copy of the project it can import.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import site
import subprocess
import sys
import time
import urllib.request
import venv
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

import judge
from tests.paths import REPO_ROOT
from tests.web.factories import free_port

pytestmark = pytest.mark.slow

NOT_SOURCE = (".git", ".venv", "node_modules", "build", "var", "*.egg-info", "__pycache__", ".*_cache")
RIGHT_204 = (REPO_ROOT / "problems" / "204-rmsnorm" / "reference.py").read_text(encoding="utf-8")


@dataclass(frozen=True)
class Installed:
    bin: Path
    home: Path  # the user's folder: caches and data go below it
    work: Path  # a folder outside the clone, where commands run

    def env(self, **extra: str) -> dict[str, str]:
        keep = {k: v for k, v in os.environ.items() if not k.startswith("JUDGE_") and k != "PYTHONPATH"}
        return {**keep, "HOME": str(self.home), "XDG_CACHE_HOME": "", "XDG_DATA_HOME": "", **extra}

    def run(self, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.bin / "judge"), *args],
            capture_output=True,
            text=True,
            env=self.env(),
            cwd=self.work,
            timeout=timeout,
        )


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    root = tmp_path_factory.mktemp("wheel")
    assert (REPO_ROOT / "web" / "static" / "dist" / "app.js").exists(), (
        "build the front end first (make frontend): the wheel carries it"
    )
    # Built from a copy: setuptools keeps a build/ folder whose stale files would go into the
    # next wheel, and the tree under test must not be written to.
    source = root / "source"
    shutil.copytree(REPO_ROOT, source, ignore=shutil.ignore_patterns(*NOT_SOURCE))
    built = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(root),
            ".",
        ],
        cwd=source,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stderr
    (wheel,) = root.glob("llm_judge-*.whl")
    env_dir = root / "venv"
    venv.create(env_dir, with_pip=False)
    (purelib,) = (env_dir / "lib").glob("python3*/site-packages")
    # The dependencies of the running environment, as a plain path: no .pth of it runs.
    (purelib / "deps.pth").write_text("\n".join(site.getsitepackages()) + "\n", encoding="utf-8")
    install = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(env_dir / "bin" / "python"),
            "install",
            "-q",
            "--no-deps",
            str(wheel),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert install.returncode == 0, install.stderr
    (root / "home").mkdir()
    (root / "work").mkdir()
    return Installed(env_dir / "bin", root / "home", root / "work")


def test_it_imports_the_installed_copy_only(installed: Installed) -> None:
    probe = subprocess.run(
        [
            str(installed.bin / "python"),
            "-c",
            "import judge, web, sandbox; print(judge.__file__, web.__file__)",
        ],
        capture_output=True,
        text=True,
        env=installed.env(),
        cwd=installed.work,
        timeout=60,
    )
    assert probe.returncode == 0, probe.stderr
    assert str(REPO_ROOT) not in probe.stdout and "site-packages" in probe.stdout


def test_version(installed: Installed) -> None:
    res = installed.run("--version")
    assert res.returncode == 0 and judge.__version__ in res.stdout, res.stderr


def test_run_judges_a_shipped_problem_from_another_folder(installed: Installed) -> None:
    solution = installed.work / "solution.py"
    solution.write_text(RIGHT_204, encoding="utf-8")
    res = installed.run("run", "204", str(solution), "--backend", "local", "--json")
    assert res.returncode == 0, res.stderr
    report = json.loads(res.stdout)
    assert report["verdict"] == "AC" and report["score"] == report["max_score"]
    # The reference observations were cached under the user's folder, not in the clone.
    assert any((installed.home / ".cache" / "llm-judge").rglob("*")), "no cache written"


@pytest.fixture
def server(installed: Installed) -> Iterator[str]:
    assert installed.run("db", "upgrade").returncode == 0
    port = free_port()
    env = installed.env(JUDGE_BACKEND="local", JUDGE_ALLOW_UNSANDBOXED="1", JUDGE_WORKERS="1")
    log = installed.work / "serve.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [str(installed.bin / "judge"), "serve", "--host", "127.0.0.1", "--port", str(port)],
            env=env,
            cwd=installed.work,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                urllib.request.urlopen(f"{url}/healthz", timeout=2).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"judge serve did not come up:\n{log.read_text()[-3000:]}")
                time.sleep(0.3)
        yield url
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_serve_renders_pages_with_their_assets_and_the_api(installed: Installed, server: str) -> None:
    page = urllib.request.urlopen(f"{server}/problems/204", timeout=10).read().decode()
    assert "RMSNorm" in page and "/static/dist/app.js?v=" in page
    css = urllib.request.urlopen(f"{server}/static/dist/app.css", timeout=10)
    assert css.status == 200 and len(css.read()) > 1000
    problems = json.loads(urllib.request.urlopen(f"{server}/api/problems", timeout=10).read())
    assert {p["id"] for p in problems} >= {"204", "216"}
    # The server's files went to the user's data folder, beside nothing of the clone.
    assert (installed.home / ".local" / "share" / "llm-judge" / "judge.db").is_file()
