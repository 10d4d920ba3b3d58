"""The kit's command line (judge/authoring/practice.py, copied to practice/judge.py): tracebacks that name the
learner's real files, and one language at a time. On a small course of two problems whose
modules are qwen.norm (901) and qwen.uses (902, which imports the learner's qwen.norm)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from judge.authoring.package import Problem
from judge.expected import ExpectedStore
from tests.factories import make_package
from tests.judge.core.test_parts import PLUS_ONE_CASES

USES_NORM = "from qwen.norm import f as double\n\n\ndef f(x):\n    return double(x) + 1\n"
# Line 15 raises, inside f, as a learner's half-written module does.
RAISES_ON_15 = "\n".join(
    [
        '"""My norm."""',
        "import torch",
        "",
        "",
        "def helper(x):",
        "    return x",
        "",
        "",
        "def f(x):",
        "    y = helper(x)",
        "    if y.numel() > 0:",
        "        y = y * 2",
        "    else:",
        "        y = y * 3",
        "    raise ValueError('not finished')",
        "",
    ]
)
CJK = re.compile(r"[\u4e00-\u9fff\uff08\uff09\uff1a\uff0c\u3002]")


@pytest.fixture(scope="module")
def practice(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from judge.authoring.kit import build_kit
    from judge.backends import make_backend
    from judge.settings import SandboxSettings

    root = tmp_path_factory.mktemp("practice-course")
    norm = Problem(make_package(root / "problems", problem_id="901", extra_toml='module = "qwen.norm"'))
    uses = Problem(
        make_package(
            root / "problems",
            problem_id="902",
            slug="uses",
            cases=PLUS_ONE_CASES,
            reference=USES_NORM,
            wrong={"plus_two": '"""加了 2 / You added 2."""\ndef f(x):\n    return 2 * x + 2\n'},
            extra_toml='module = "qwen.uses"\nparts = ["901"]',
        )
    )
    # Tight limits, for learner code that runs into them.
    limited = Problem(
        make_package(
            root / "problems",
            problem_id="903",
            slug="limits",
            time_s=1,
            memory_mb=64,
            extra_toml='module = "qwen.limits"',
        )
    )
    backend, _ = make_backend("auto", SandboxSettings(mode="fork", pool_size=1))  # Docker under CI
    try:
        return build_kit(
            root / "out", [norm, uses, limited], ExpectedStore(root / "cache"), backend, "http://127.0.0.1:9"
        )
    finally:
        backend.close()


def kit(practice: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """`python practice/judge.py ARGS` from the folder that holds practice/, in a clean environment
    (no locale, no JUDGE_LANG) plus `env`."""
    base = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(practice.parent)}
    return subprocess.run(
        [sys.executable, "practice/judge.py", *args],
        cwd=practice.parent,
        env={**base, **env},
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_a_traceback_names_the_learners_file_and_line(practice: Path) -> None:
    (practice / "qwen" / "norm.py").write_text(RAISES_ON_15)
    judged = kit(practice, "901", "--json", "--lang", "en")
    report = json.loads(judged.stdout)
    assert report["verdict"] == "RE", report
    message = report["cases"][0]["message"]
    assert 'File "practice/qwen/norm.py", line 15, in f' in message, message
    assert "raise ValueError('not finished')" in message and "solution.py" not in message
    # The table says the same, in the learner's words.
    table = kit(practice, "901").stdout
    assert 'File "practice/qwen/norm.py", line 15' in table and "solution.py" not in table

    # Raised in their part, imported by another problem of theirs: that file, not qwen/norm.py alone.
    (practice / "qwen" / "uses.py").write_text(USES_NORM)
    used = json.loads(kit(practice, "902", "--json", "--lang", "en").stdout)
    message = used["cases"][0]["message"]
    assert 'File "practice/qwen/uses.py", line 5, in f' in message, message
    assert 'File "practice/qwen/norm.py", line 15, in f' in message, message


def test_the_command_line_speaks_chinese_by_default(practice: Path) -> None:
    listed = kit(practice)
    assert listed.returncode == 0, listed.stderr
    assert (
        "本地结果" in listed.stdout and "你的文件" in listed.stdout and "用公开用例评测一题" in listed.stdout
    )
    assert "local" not in listed.stdout and "your file" not in listed.stdout
    unknown = kit(practice, "999")
    assert unknown.returncode == 2
    assert unknown.stderr.startswith("错误: 练习包里没有题目 '999'") and "no problem" not in unknown.stderr
    # A locale that is neither language (C.UTF-8, POSIX) keeps the default.
    assert "本地结果" in kit(practice, LANG="C.UTF-8").stdout
    helped = kit(practice, "--help").stdout
    assert "评测全部题目" in helped and "judge every problem" not in helped
    assert "显示这段帮助并退出" in helped and "show this help" not in helped  # argparse's own words too
    wrong = kit(practice, "--bogus")
    assert wrong.returncode == 2 and "无法识别的参数" in wrong.stderr and "unrecognized" not in wrong.stderr


@pytest.mark.parametrize(
    ("args", "env"),
    [(("--lang", "en"), {}), (("--lang=en",), {}), ((), {"JUDGE_LANG": "en"}), ((), {"LANG": "en_US.UTF-8"})],
)
def test_the_command_line_speaks_english_when_asked(
    practice: Path, args: tuple[str, ...], env: dict[str, str]
) -> None:
    listed = kit(practice, *args, **env)
    assert listed.returncode == 0, listed.stderr
    assert "your file" in listed.stdout and "judges one problem on its public cases" in listed.stdout
    assert not CJK.findall(listed.stdout.replace("加倍", "")), listed.stdout  # the titles are the test's
    unknown = kit(practice, "999", *args, **env)
    assert unknown.returncode == 2 and unknown.stderr.startswith("error: no problem '999'"), unknown.stderr
    assert not CJK.findall(unknown.stderr), unknown.stderr
    helped = kit(practice, "--help", *args, **env).stdout
    assert "judge every problem" in helped and not CJK.findall(helped), helped


def test_the_flag_wins_over_the_environment(practice: Path) -> None:
    assert "本地结果" in kit(practice, "--lang", "zh", JUDGE_LANG="en", LANG="en_US.UTF-8").stdout
    assert "本地结果" in kit(practice, JUDGE_LANG="zh", LANG="en_US.UTF-8").stdout
    token = kit(practice, "901", "--submit", "--lang", "en")
    assert token.returncode == 2 and token.stderr.startswith("error: no API token"), token.stderr
    assert not CJK.findall(token.stderr)
    assert kit(practice, "901", "--submit").stderr.startswith("错误: 没有令牌")


# What learner code can do to the process it runs in, and the verdict each gets.
ENDINGS = {
    "exits_at_import": ("import sys\n\nsys.exit(3)\n", "RE"),
    "os_exit": ("def f(x):\n    import os\n\n    os._exit(5)\n", "RE"),
    "segfault": ("def f(x):\n    import ctypes\n\n    return ctypes.string_at(0)\n", "RE"),
    "endless_loop": ("def f(x):\n    while True:\n        pass\n", "TLE"),
    "huge_allocation": ("import torch\n\n\ndef f(x):\n    return torch.empty(1 << 36)\n", "MLE"),
}


def judged(practice: Path, **env: str) -> dict[str, Any]:
    done = kit(practice, "903", "--json", "--lang", "en", **env)
    assert done.returncode == 1, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    return report


@pytest.mark.slow
@pytest.mark.parametrize("ending", sorted(ENDINGS))
def test_the_kit_forks_its_runner_and_judges_as_a_new_runner_process(practice: Path, ending: str) -> None:
    """The kit runs the learner's code in a child forked from itself (judge.core.forked); whatever
    that code does to its process, the kit lives on and says what a new runner process says."""
    source, verdict = ENDINGS[ending]
    (practice / "qwen" / "limits.py").write_text(source)
    forked = judged(practice)
    cold = judged(practice, JUDGE_LOCAL_FORK="0")
    assert forked["verdict"] == verdict, forked
    shown = ("name", "verdict", "score", "message", "ran", "hint")
    assert [{k: c.get(k) for k in shown} for c in forked["cases"]] == [
        {k: c.get(k) for k in shown} for c in cold["cases"]
    ]
    kept = ("score", "log", "warnings")
    assert [forked[k] for k in kept] == [cold[k] for k in kept]


def test_the_kit_forks_only_where_it_may(practice: Path) -> None:
    # The learner's code names the program its process runs: the kit's judge.py when forked
    # from it, a new runner's __main__.py otherwise.
    (practice / "qwen" / "limits.py").write_text(
        "import os\nimport sys\n\n\ndef f(x):\n"
        "    raise ValueError('main=' + os.path.basename(sys.modules['__main__'].__file__))\n"
    )
    assert "main=judge.py" in judged(practice)["cases"][0]["message"]
    assert "main=__main__.py" in judged(practice, JUDGE_LOCAL_FORK="0")["cases"][0]["message"]
