"""Issue 31 item 7: a starter in the reader's language, wrapped to the editor, with the package's
code untouched; tags in the reader's language."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from judge.authoring.starters import WIDTH, _width, has_chinese, in_language
from tests.sources import code_only
from web.pages.tags import TAG_NAMES_ZH, tag_names

PROBLEMS = Path(__file__).resolve().parents[3] / "problems"
STARTERS = sorted(PROBLEMS.glob("*/starter.py"))


@pytest.mark.parametrize("path", STARTERS, ids=lambda p: p.parent.name)
def test_a_starter_in_one_language_keeps_its_code(path: Path) -> None:
    source = path.read_text()
    english, chinese = in_language(source, "en"), in_language(source, "zh")
    for shown in (english, chinese):
        assert code_only(shown) == code_only(source)
        for line in shown.splitlines():
            if line.lstrip().startswith("#") and " " in line.strip():
                assert _width(line) <= WIDTH + 12, line  # wrapped (a long unbroken word may stay)
    assert not any(has_chinese(line) for line in english.splitlines())
    # Each TODO once: as many in the Chinese starter as the package has Chinese ones.
    todos = [line for line in chinese.splitlines() if line.lstrip().startswith("# TODO")]
    chinese_todos = [
        line for line in source.splitlines() if line.lstrip().startswith("# TODO") and has_chinese(line)
    ]
    assert len(todos) == len(chinese_todos)


def test_the_english_todo_goes_from_the_chinese_starter() -> None:
    source = (PROBLEMS / "205-rope" / "starter.py").read_text()
    chinese = in_language(source, "zh")
    assert "全部用 fp32" in chinese and "all in fp32" not in chinese
    assert '"""RoPE 的 cos/sin 表。' in chinese
    english = in_language(source, "en")
    assert '"""The RoPE cos and sin tables.' in english and "全部" not in english


def test_every_tag_of_the_course_has_a_chinese_name() -> None:
    tags = set()
    for toml in PROBLEMS.glob("*/problem.toml"):
        found = re.search(r"^tags = \[(.*)\]$", toml.read_text(), re.M)
        if found:
            tags |= set(re.findall(r'"([^"]+)"', found.group(1)))
    names_of_code = {"bf16", "gqa", "qwen3.5", "rope", "safetensors", "swiglu"}
    assert tags - names_of_code <= set(TAG_NAMES_ZH), sorted(tags - names_of_code - set(TAG_NAMES_ZH))
    assert tag_names(["normalization", "bf16"], "zh") == ["归一化", "bf16"]
    assert tag_names(["normalization"], "en") == ["normalization"]
