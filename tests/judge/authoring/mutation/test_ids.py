"""Mutant ids come from the syntax tree (issue 32): comments, blank lines, docstrings and edits
of other functions keep every id, the set of mutants is the one the `line:column:operator` ids
named before, and a declaration that matches no mutant says which one it probably meant."""

from __future__ import annotations

import ast
import hashlib
import json
import re
from pathlib import Path

import pytest

from judge.authoring.mutation.generate import Mutant, generate
from judge.authoring.mutation.run import MutantResult, MutationScore
from judge.authoring.mutation.suggest import closest
from judge.authoring.package import EquivalentMutant
from judge.authoring.validation.diagnostics import Diagnostics
from judge.authoring.validation.mutants import check_mutants
from tests.paths import REPO_ROOT

# Every shipped reference as it stood when the ids changed, with a digest of the sorted
# (line, column, operator, change) of the mutants the old generator made of it (state ones too).
BEFORE = Path(__file__).parent / "data" / "mutants_before_issue32.json"
REFERENCES = sorted(p.parent.name for p in (REPO_ROOT / "problems").glob("*/reference.py"))

SOURCE = '''\
"""A module."""
import torch


def helper(x):
    return x.float() * 2


class Norm:
    eps = 1e-6
    heads = 2

    def forward(self, x, w):
        xf = x.float()
        if xf.numel() == 0:
            return xf
        for _ in range(2):
            xf = xf + self.eps
        else:
            xf = xf * w.float()
        return (xf * w.float()).to(x.dtype)
'''


def by_id(source: str) -> dict[str, Mutant]:
    return {m.id: m for m in generate(source, state=True)}


def rows(mutants: list[Mutant]) -> list[list[object]]:
    return sorted([m.line, m.col, m.operator, m.change] for m in mutants)


def test_ids_name_the_function_the_statement_path_the_operator_and_a_number() -> None:
    ids = by_id(SOURCE)
    assert ids["helper/0:drop-cast"].line == 6
    assert ids["Norm.forward/0:drop-cast"].change == "x.float() → x"
    assert ids["Norm.forward/1:drop-guard"].line == 15  # the `if` that guards the `return`
    assert ids["Norm.forward/2:int+1"].change == "2 → 3"  # the `for` line itself
    assert ids["Norm.forward/2.0:arith"].change == "xf + self.eps → xf - self.eps"  # the for's body
    assert ids["Norm.forward/2.else0:drop-cast"].line == 20  # the for's `else:`
    # Two casts in one statement: numbered in walk order (the outer `.to` first).
    casts = [ids["Norm.forward/3:drop-cast"], ids["Norm.forward/3:drop-cast#2"]]
    assert [(m.line, m.col, m.change) for m in casts] == [
        (21, 15, "(xf * w.float()).to(x.dtype) → xf * w.float()"),
        (21, 21, "w.float() → w"),
    ]
    assert "Norm.forward/3:drop-cast#3" not in ids
    assert ids["Norm.forward/def:batch0#2"].change.startswith("w → w[:1]")  # the def line
    assert ids["Norm/1:int+1"].line == 11  # a class attribute: the class's statement 1


@pytest.mark.parametrize("name", REFERENCES)
def test_the_same_mutants_as_the_line_column_ids_made(name: str) -> None:
    before = json.loads(BEFORE.read_text())
    assert name in before, f"{name} is new since issue 32: nothing to compare"
    mutants = generate(before[name]["source"], state=True)
    digest = hashlib.sha256(json.dumps(rows(mutants), ensure_ascii=False).encode()).hexdigest()
    assert (len(mutants), digest) == (before[name]["mutants"], before[name]["sha256"])
    assert len({m.id for m in mutants}) == len(mutants)


def commented(source: str) -> str:
    """`source` with a blank line and a comment above every statement, the module docstring
    edited, and a function added at the end."""
    lines = source.splitlines()
    starts = {s.lineno: s.col_offset for s in ast.walk(ast.parse(source)) if isinstance(s, ast.stmt)}
    edited: list[str] = []
    for number, line in enumerate(lines, 1):
        if number in starts:
            edited += ["", " " * starts[number] + "# a comment the author added"]
        edited.append(line)
    text = "\n".join(edited) + "\n\n\ndef added_later(x):\n    return x.float().sum(dim=-1)\n"
    return text.replace('"""', '"""Edited.\n\n', 1)


def _unplaced(change: str) -> str:
    """A memo mutant names its attribute after the line it was made at (`self._memo_71_12`)."""
    return re.sub(r"_memo_[0-9]+_[0-9]+", "_memo_L_C", change)


@pytest.mark.parametrize("name", REFERENCES)
def test_comments_blank_lines_docstrings_and_other_functions_keep_every_id(name: str) -> None:
    source = (REPO_ROOT / "problems" / name / "reference.py").read_text()
    assert source.startswith('"""')  # so that the docstring edit below happens
    original = generate(source, state=True)
    moved = generate(commented(source), state=True)
    kept = {m.id: (m.operator, _unplaced(m.change)) for m in original}
    now = {m.id: (m.operator, _unplaced(m.change)) for m in moved if not m.id.startswith("added_later/")}
    assert now == kept
    lines = {m.id: m.line for m in original}
    assert all(m.line > lines[m.id] for m in moved if m.id in lines)  # the lines did move


def test_an_edit_of_another_statement_keeps_the_ids_after_it_unless_it_adds_one_before() -> None:
    ids = set(by_id(SOURCE))
    # Another statement of the same function changed (not added): every id of the others stays.
    changed = set(by_id(SOURCE.replace("xf = xf + self.eps", "xf = xf + 2 * self.eps")))
    assert {i for i in ids if not i.startswith("Norm.forward/2.0:")} <= changed
    # A statement added before one renumbers it, as the docs say.
    added = by_id(SOURCE.replace("        xf = x.float()\n", "        xf = x.float()\n        y = 1\n"))
    assert "Norm.forward/4:drop-cast" in added and "helper/0:drop-cast" in added


def score(source: str, declared: dict[str, str], survivors: set[str]) -> MutationScore:
    results = [MutantResult(m, killed=m.id not in survivors, by=["case_a"]) for m in generate(source)]
    return MutationScore(results, declared)


def meant_id(declared: str, mutants: list[Mutant]) -> str | None:
    found = closest(declared, mutants)
    return None if found is None else found.id


def test_a_declaration_that_matches_nothing_names_the_mutant_it_probably_meant() -> None:
    # A line:column id from before issue 32: of its operator, the undeclared survivor comes before
    # the mutant made at exactly that line and column (21:15, killed here).
    survivor = "Norm.forward/3:drop-cast#2"
    s = score(SOURCE, {"21:15:drop-cast": "the weight is fp32"}, {survivor})
    out = Diagnostics()
    check_mutants(out, s)
    text = "\n".join(c.detail for c in out.checks)
    meant = by_id(SOURCE)[survivor]
    expected = (
        f"declared 21:15:drop-cast matches no mutant; did you mean {survivor} "
        f"(line {meant.line}: {meant.change})?"
    )
    assert expected in text

    # A new-style id whose statement moved: the same operator in the same function, nearest path.
    mutants = generate(SOURCE)
    assert meant_id("Norm.forward/4:drop-cast", mutants) == "Norm.forward/3:drop-cast"
    assert meant_id("helper/1:drop-cast", mutants) == "helper/0:drop-cast"
    assert closest("Norm.forward/0:no-such-operator", mutants) is None
    # A killed declaration is told as such, not as a missing one.
    killed = score(SOURCE, {"helper/0:drop-cast": "x"}, set())
    assert killed.unmatched() == []
    assert [r.mutant.id for r in killed.declared_killed] == ["helper/0:drop-cast"]
    out = Diagnostics()
    check_mutants(out, killed)
    detail = out.checks[0].detail
    assert "declared equivalent but killed: helper/0:drop-cast: line 6: x.float() → x fails case_a" in detail


def test_an_old_id_still_loads_from_problem_toml_so_that_the_message_can_name_the_new_one() -> None:
    for ok in (
        "34:43:drop-cast",
        "GatedRMSNorm.forward/0:drop-cast#2",
        "<module>/3.else0:int+1",
        "f/def:int-1",
    ):
        assert EquivalentMutant(id=ok, reason="r").id == ok
    with pytest.raises(ValueError):
        EquivalentMutant(id="forward drop-cast", reason="r")
