"""`judge new ID SLUG`: a package skeleton that `judge validate` then guides to completion.

The skeleton is deliberately not sound: its statements hold TODO placeholders and it has
no wrong solutions, so validate names exactly what the author still has to write.
"""

from __future__ import annotations

from pathlib import Path

from judge.authoring.package import ID_PATTERN, SLUG_PATTERN
from judge.core.errors import JudgeError


class ScaffoldError(JudgeError):
    pass


PROBLEM_TOML = """\
id = "{id}"
slug = "{slug}"
version = 1
difficulty = "easy"
chapter = "TODO"
tags = []
entry_points = ["solve"]
forbidden = []
points = 100

[title]
zh = "{slug}"
en = "{slug}"

[limits]
time_s = 5
memory_mb = 1024
output_kb = 64

# The scratch cell ("Try your input") opens with this snippet: a public case's call, shortened,
# that runs against the reference. `[scratch.cases]` may add a public case's call by its name.
[scratch]
example = '''
x = torch.randn(2, 3)
solve(x)
'''
"""

STATEMENT = """\
# {id} {slug}

TODO: {what}
"""

STARTER = """\
import torch


def solve(x):
    # TODO: 你的实现 / your implementation
    raise NotImplementedError
"""

REFERENCE = '''\
"""Reference for problem {id}."""

import torch


def solve(x):
    return x * 2
'''

CASES = '''\
"""Cases for problem {id}. Each returns observations; the judge compares them with the reference's."""

import torch

from judge.core.casekit import case
from judge.core.checkers import allclose


@case(points=50, public=True)
def small_fp32(impl, rng):
    """小输入 / a small fp32 input"""
    return {{"y": impl.solve(rng.normal(2, 3))}}


@case(points=50, checker=allclose())
def bf16_input(impl, rng):
    """bf16 输入 / a bf16 input"""
    return {{"y": impl.solve(rng.normal(4, 8, dtype=torch.bfloat16))}}
'''

# Only the format, as comments: validate then says which notes are still to write, and no
# placeholder sentence can ever reach a learner.
NOTES = """\
# Why each accepted solution is right (shown to a learner after their own AC).
# [reference]
# zh = "参考实现……"
# en = "The reference ..."
# [accepted.<a file stem in solutions/accepted/>]
# zh = "……"
# en = "..."
"""


def scaffold(problem_id: str, slug: str, problems_dir: Path) -> Path:
    if not ID_PATTERN.match(problem_id):
        raise ScaffoldError(f"id must be 3 to 5 digits, got {problem_id!r}")
    if not SLUG_PATTERN.match(slug):
        raise ScaffoldError(f"slug must be lowercase words joined by '-', got {slug!r}")
    if problems_dir.is_dir():
        taken = [p.name for p in problems_dir.iterdir() if p.name.split("-", 1)[0] == problem_id]
        if taken:
            raise ScaffoldError(f"id {problem_id} is taken by {taken[0]}")
    root = problems_dir / f"{problem_id}-{slug}"
    files = {
        "problem.toml": PROBLEM_TOML.format(id=problem_id, slug=slug),
        "statement.zh.md": STATEMENT.format(
            id=problem_id, slug=slug, what="用中文写题面：要实现什么、为什么。"
        ),
        "statement.en.md": STATEMENT.format(id=problem_id, slug=slug, what="the statement in English."),
        "starter.py": STARTER,
        "reference.py": REFERENCE.format(id=problem_id),
        "cases.py": CASES.format(id=problem_id),
        "solutions/accepted/.gitkeep": "",
        "solutions/wrong/.gitkeep": "",
        "solutions/notes.toml": NOTES,
    }
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root
