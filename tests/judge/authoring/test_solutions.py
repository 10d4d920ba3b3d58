"""The solutions shown after AC: the notes file's checks, and `judge validate` refusing a gap."""

from __future__ import annotations

from pathlib import Path

import pytest

from judge.authoring.package import Problem, all_problem_dirs
from judge.authoring.solutions import notes_check, read_solutions
from judge.authoring.validate import validate_package
from judge.settings import JudgeSettings
from tests.factories import local_backend, make_package
from tests.paths import REPO_ROOT

ACCEPTED = {"sum": "def f(x):\n    return x + x\n", "scaled": "def f(x):\n    return 2.0 * x\n"}
NOTES = """
[reference]
zh = "乘以 2。"
en = "Multiplies by 2."
[accepted.sum]
zh = "x + x 就是 2x。"
en = "x + x is 2x."
[accepted.scaled]
zh = "标量乘法。"
en = "A scalar product."
"""


def package(tmp_path: Path, notes: str | None = NOTES, accepted: dict[str, str] | None = None) -> Problem:
    pkg = make_package(tmp_path, accepted=ACCEPTED if accepted is None else accepted, notes=notes)
    if notes is None:
        (pkg / "solutions" / "notes.toml").unlink()
    return Problem(pkg)


def test_the_reference_and_each_accepted_file_come_with_their_note(tmp_path: Path) -> None:
    found = read_solutions(package(tmp_path))
    assert found.problems == []
    assert [s.name for s in found.all] == ["reference", "accepted/scaled", "accepted/sum"]
    assert found.reference.code == "def f(x):\n    return x * 2\n"
    by_name = {s.name: s for s in found.all}
    assert by_name["accepted/sum"].code == ACCEPTED["sum"]
    note = by_name["accepted/sum"].note
    assert note is not None and (note.zh, note.en) == ("x + x 就是 2x。", "x + x is 2x.")
    assert notes_check(package(tmp_path / "again")) == (
        True,
        "a note for the reference and each of 2 accepted solutions",
    )


def test_missing_notes_name_the_package(tmp_path: Path) -> None:
    ok, detail = notes_check(package(tmp_path, notes=None))
    assert not ok
    assert "problem 901 (901-double): solutions/notes.toml is missing" in detail
    # The site still shows the code, without notes.
    found = read_solutions(package(tmp_path / "site", notes=None))
    assert [s.note for s in found.all] == [None, None, None] and found.reference.code


@pytest.mark.parametrize(
    ("notes", "message"),
    [
        (NOTES.replace("[accepted.scaled]", "[accepted.scaled_up]"), "no [accepted.scaled] note"),
        (
            NOTES.replace("[accepted.scaled]", "[accepted.scaled_up]"),
            "[accepted.scaled_up] names no file (solutions/accepted/scaled_up.py is not there)",
        ),
        (NOTES.split("[accepted.sum]")[0].replace("[reference]", "[other]"), "other: Extra inputs"),
        (NOTES.replace('en = "Multiplies by 2."', ""), "reference.en: Field required"),
        (NOTES.replace('en = "x + x is 2x."', 'en = "  "'), "accepted.sum.en: String should have at least 1"),
        (NOTES.replace('zh = "标量乘法。"', 'zh = "标量乘法。"\nzh = "again"'), "not valid TOML"),
        (
            "[accepted.sum]\nzh = 'a'\nen = 'b'\n[accepted.scaled]\nzh = 'a'\nen = 'b'\n",
            "no [reference] note",
        ),
    ],
)
def test_every_gap_in_the_notes_is_named(tmp_path: Path, notes: str, message: str) -> None:
    ok, detail = notes_check(package(tmp_path, notes=notes))
    assert not ok
    assert message in detail, detail
    assert all(
        line.startswith("problem 901 (901-double): solutions/notes.toml") for line in detail.splitlines()
    )


def test_a_package_with_no_accepted_file_needs_the_reference_note_only(tmp_path: Path) -> None:
    notes = '[reference]\nzh = "乘以 2。"\nen = "Multiplies by 2."\n'
    assert notes_check(package(tmp_path, notes=notes, accepted={})) == (
        True,
        "a note for the reference and each of 0 accepted solutions",
    )


@pytest.mark.slow
def test_validate_refuses_a_package_without_notes_and_only_for_that(tmp_path: Path) -> None:
    pkg = make_package(tmp_path, accepted={"sum": ACCEPTED["sum"]}, notes="")
    result = validate_package(pkg, local_backend(), JudgeSettings(cache_dir=tmp_path / "cache"))
    checks = {c.name: c for c in result.checks}
    assert not checks["notes"].ok
    assert "no [reference] note" in checks["notes"].detail
    assert "no [accepted.sum] note" in checks["notes"].detail
    assert checks["reference"].ok and checks["accepted/sum"].ok


@pytest.mark.parametrize("pkg", all_problem_dirs(REPO_ROOT / "problems"), ids=lambda p: p.name)
def test_every_shipped_package_explains_its_solutions(pkg: Path) -> None:
    ok, detail = notes_check(Problem(pkg))
    assert ok, detail
