"""`judge new [ID] SLUG`: a package skeleton that `judge validate` then guides to completion.

Each file says in a comment or docstring what goes in it, and the skeleton shows the habits a
sound package needs: a bf16 case compared by ulps, a known mistake with its hint. It is
deliberately not sound: its statements hold TODO placeholders, the chapter is TODO and it has
one wrong solution of the three, so validate names exactly what the author still has to write.
Without an id it takes the next free one of the folder.
"""

from __future__ import annotations

from pathlib import Path

from judge.authoring.package import ID_PATTERN, SLUG_PATTERN
from judge.core.errors import JudgeError


class ScaffoldError(JudgeError):
    pass


PROBLEM_TOML = """\
# What the judge needs to know about problem {id} (docs/authoring.md, "What goes in the folder").
id = "{id}"
slug = "{slug}"
version = 1                  # +1 when a change can turn a learner's verdict (then a [changes.N] note)
difficulty = "easy"          # easy, medium or hard
chapter = "TODO"             # the course chapter's number ("03"), or a label outside a course
tags = []
entry_points = ["solve"]     # the names a learner's file must define
forbidden = []               # torch APIs a learner may not call (e.g. "torch.nn.functional.rms_norm")
points = 100                 # the sum of the cases' points

[title]
zh = "{slug}"
en = "{slug}"

[limits]
time_s = 5                   # the learner's code, all cases together
memory_mb = 1024
output_kb = 64

# The scratch cell ("Try your input") opens with this snippet: a public case's call, shortened,
# that runs against the reference. `[scratch.cases]` may add a public case's call by its name.
[scratch]
example = '''
x = torch.randn(2, 3)
solve(x)
'''

# A small problem may lower a bar of `judge validate`, with its reason (docs/authoring.md):
# [validation]
# min_hidden = {{ value = 2, reason = "..." }}
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
"""The correct solution of problem {id}: the judge runs it in a trusted process and compares
every learner's observations with its own. Learners never see this file. Write it as a learner
would (every operation spelt out), since its mutants are what prove the cases strong."""

import torch


def solve(x):
    return x * 2
'''

CASES = '''\
"""The cases of problem {id}. Each calls the learner's code (`impl`) on inputs drawn from `rng`
(seeded per case, so every run draws the same) and returns observations: tensors the judge
compares with the reference's under the case's checker. Public cases are shown to learners in
full; the others only by verdict. Compute nothing about the learner's output here (a flag, a
statistic): return the data and let the judge compare it."""

import torch

from judge.core.casekit import case
from judge.core.checkers import ulp


@case(points=40, public=True)
def small_fp32(impl, rng):
    """小输入 / a small fp32 input"""
    return {{"y": impl.solve(rng.normal(2, 3))}}


# bf16 keeps 8 bits of mantissa: compare by units in the last place, not by a relative
# tolerance. allclose's default bf16 tolerance would let the classic mistake through (computing
# in bf16 where the statement promises fp32 inside: 2-3 ulps off on many elements).
@case(points=30, checker=ulp(max_ulps=1, max_fraction=0.02))
def bf16_input(impl, rng):
    """bf16 输入 / a bf16 input"""
    return {{"y": impl.solve(rng.normal(4, 8, dtype=torch.bfloat16))}}


# What production code promises and a first try often breaks: the same function called again
# (twice with one shape: a result cached by shape shows), another dtype, a transposed view.
@case(points=30)
def calls_and_layouts(impl, rng):
    """多次调用、转置视图 / repeated calls and a transposed view"""
    x = rng.normal(4, 6)
    calls = [rng.normal(3, 5), rng.normal(3, 5), rng.normal(1, 7, dtype=torch.float64)]
    return {{
        "calls": [impl.solve(c) for c in calls],
        "contiguous": impl.solve(x.t().contiguous()),
        "transposed_view": impl.solve(x.t()),
    }}
'''

WRONG = '''\
"""你乘了 3，而题目要求乘 2：检查系数。

You multiplied by 3 where the statement asks for 2: check the factor."""

# A known mistake, written as a learner would write it. Its module docstring (Chinese, then
# English) is the hint a learner whose outputs match this file's is shown. Every wrong solution
# must fail at least one case and be shown its own hint.

import torch


def solve(x):
    return x * 3
'''

ACCEPTED_README = """\
Other correct solutions, one file each, written differently from the reference (another
formulation, another order of operations, a production style): each must get AC, which proves
the cases do not demand the reference's exact operations. Give each a note in ../notes.toml.
"""

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

# A new problem's id when the folder holds none yet: after the course's own (2xx).
FIRST_ID = 301


def next_free_id(problems_dir: Path) -> str:
    """One more than the largest id in `problems_dir`, or FIRST_ID in an empty folder."""
    taken = [
        int(p.name.split("-", 1)[0])
        for p in (problems_dir.iterdir() if problems_dir.is_dir() else [])
        if p.is_dir() and ID_PATTERN.match(p.name.split("-", 1)[0])
    ]
    return str(max(taken, default=FIRST_ID - 1) + 1)


def scaffold(problem_id: str | None, slug: str, problems_dir: Path) -> Path:
    """A new package `problems_dir/ID-SLUG`; `problem_id` None takes the next free one."""
    if problem_id is None:
        problem_id = next_free_id(problems_dir)
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
        "solutions/accepted/README.md": ACCEPTED_README,
        "solutions/wrong/times_three.py": WRONG,
        "solutions/notes.toml": NOTES,
    }
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root
