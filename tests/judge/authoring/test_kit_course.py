"""The course's own chapter scripts run on the kit's package: `ch03_norm.py`, taken verbatim from the
course's text, run with the kit's layout (cwd practice/, `import qwen` from practice/qwen/) on the
packages' references, finds the kit's tiny practice checkpoint when no real model is configured,
and prints its weight-independent lines as the course's own output does.

The course's text is not part of this repository: it is read from the folder named by
JUDGE_COURSE_SEEDS. Without it the test skips, except under JUDGE_REQUIRE_COURSE=1 (set by
.ci/run), where it fails.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from judge.authoring.package import Problem
from judge.expected import ExpectedStore
from tests.paths import REPO_ROOT

PROBLEMS = REPO_ROOT / "problems"
SCRIPT = "ch03_norm.py"
OUTPUT_HEADING = "输出"
# The lines of the script's output that do not depend on the checkpoint's weights or sizes, each
# found by the text it starts with (or holds), and the part of it compared: all of it, or what
# follows a marker (the RMS before normalising depends on the hidden size; after it, not).
WEIGHT_FREE = (
    ("归一化前每个向量的均方根", "时归一化后："),
    ("bf16 存 1 + 0.001", ""),
    ("bf16 输入 -> 输出 dtype", ""),
    ("l2norm 之后向量的长度", ""),
)


@dataclass(frozen=True)
class Chapter:
    script: str  # the script's code, as the course prints it
    output: list[str]  # the lines the course shows under its "输出" heading


def course_chapter(script: str) -> Chapter:
    """The chapter of the course whose text carries `script` and its output (JUDGE_COURSE_SEEDS)."""
    folder = os.environ.get("JUDGE_COURSE_SEEDS", "")
    required = os.environ.get("JUDGE_REQUIRE_COURSE") == "1"
    texts = sorted(Path(folder).glob("*.txt")) if folder else []
    for path in texts:
        found = chapter_in(path.read_text(encoding="utf-8"), script)
        if found is not None:
            return found
    why = f"no course text with {script} in JUDGE_COURSE_SEEDS={folder!r}"
    if required:
        raise AssertionError(f"JUDGE_REQUIRE_COURSE=1 but {why}")
    pytest.skip(why)


def chapter_in(text: str, script: str) -> Chapter | None:
    """The script is the block after a line that is its file name alone, up to the output heading;
    the output is the block after that heading, up to the first empty line."""
    lines = text.splitlines()
    for start, line in enumerate(lines):
        if line.strip() != script:
            continue
        try:
            heading = lines.index(OUTPUT_HEADING, start + 1)
        except ValueError:
            return None
        code = "\n".join(lines[start + 1 : heading]).strip("\n") + "\n"
        output = []
        for out in lines[heading + 1 :]:
            if not out.strip():
                if output:
                    break
                continue
            output.append(out)
        return Chapter(code, output)
    return None


def imported_modules(code: str) -> list[str]:
    """The course package's modules a script imports (qwen.norm, qwen.weights, ...)."""
    found = []
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "qwen":
            found.append(node.module)
        elif isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.split(".")[0] == "qwen"]
    return sorted(set(found))


def weight_free_lines(output: list[str]) -> list[str]:
    """The parts of `output` that WEIGHT_FREE names, one per entry, in its order."""
    picked = []
    for start, marker in WEIGHT_FREE:
        lines = [line for line in output if line.strip().startswith(start)]
        assert len(lines) == 1, (start, output)
        line = lines[0].strip()
        assert not marker or marker in line, (marker, line)
        picked.append(line.split(marker, 1)[1].strip() if marker else line)
    return picked


def test_the_course_text_is_read_as_it_is_printed() -> None:
    """The parsing the course test relies on, on a text shaped like the course's."""
    text = "\n".join(
        [
            "ch03_norm.py，约 10 秒。",
            "ch03_norm.py                 + 本章的脚本",
            "ch03_norm.py",
            "",
            '"""第 3 章"""',
            "from qwen.norm import RMSNorm",
            "import qwen.weights",
            "for g in (1, 2):",
            "    print(g)",
            "",
            OUTPUT_HEADING,
            "",
            "归一化前每个向量的均方根： ['5.14'] ；权重为 0（即比例为 1）时归一化后： ['1.00']",
            "bf16 存 1 + 0.001 得到 1.0000",
            "bf16 输入 -> 输出 dtype torch.bfloat16",
            "l2norm 之后向量的长度： ['1.000']",
            "",
            "后面的正文",
        ]
    )
    chapter = chapter_in(text, SCRIPT)
    assert chapter is not None
    assert chapter.script.startswith('"""第 3 章"""\n') and chapter.script.endswith("    print(g)\n")
    assert imported_modules(chapter.script) == ["qwen.norm", "qwen.weights"]
    assert weight_free_lines(chapter.output) == [
        "['1.00']",
        "bf16 存 1 + 0.001 得到 1.0000",
        "bf16 输入 -> 输出 dtype torch.bfloat16",
        "l2norm 之后向量的长度： ['1.000']",
    ]
    assert chapter_in("no script here", SCRIPT) is None


def packages_of(modules: list[str]) -> list[Problem]:
    """The problems whose module each of `modules` is (qwen.weights → 201-weights)."""
    by_module = {}
    for folder in sorted(PROBLEMS.iterdir()):
        if (folder / "problem.toml").is_file():
            problem = Problem(folder)
            if problem.spec.module is not None:
                by_module[problem.spec.module] = problem
    missing = [m for m in modules if m not in by_module]
    assert not missing, f"no package writes {missing} (have {sorted(by_module)})"
    return [by_module[m] for m in modules]


def test_the_course_chapter_3_script_runs_on_the_kits_package(tmp_path: Path, store: ExpectedStore) -> None:
    from judge.authoring.kit import TINY_CHECKPOINT_DIR, build_kit, learner_file
    from judge.backends import make_backend
    from judge.settings import SandboxSettings

    chapter = course_chapter(SCRIPT)
    modules = imported_modules(chapter.script)
    assert {"qwen.norm", "qwen.weights"} <= set(modules), modules
    problems = packages_of(modules)
    backend, _ = make_backend("auto", SandboxSettings(mode="fork", pool_size=1))  # Docker under CI
    try:
        practice = build_kit(tmp_path / "kit", problems, store, backend, "http://127.0.0.1:9")
    finally:
        backend.close()
    assert (practice / TINY_CHECKPOINT_DIR / "config.json").is_file()
    assert (practice / TINY_CHECKPOINT_DIR / "model.safetensors").is_file()
    # A learner who solved every part the script imports: each module holds its package's reference.
    for problem in problems:
        learner_file(practice, problem).write_text(problem.reference.source(), encoding="utf-8")
    (practice / SCRIPT).write_text(chapter.script, encoding="utf-8")
    home = tmp_path / "home"  # no ~/models/qwen3.5 there, and no QWEN_MODEL: the tiny checkpoint
    home.mkdir()
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "PYTHONIOENCODING": "utf-8"}
    ran = subprocess.run(
        [sys.executable, SCRIPT], cwd=practice, env=env, capture_output=True, text=True, timeout=300
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    # find_model says, on stderr, that it fell back to the practice checkpoint and how to pick the real one.
    assert "QWEN_MODEL" in ran.stderr, ran.stderr
    printed = ran.stdout.splitlines()
    assert weight_free_lines(printed) == weight_free_lines(chapter.output), ran.stdout
