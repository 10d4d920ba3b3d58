"""A package's change notes: `[changes.N]` in problem.toml, one line per language for each version
after the first, and the `judge validate` check that the current version has one (issue 29)."""

from __future__ import annotations

from pathlib import Path

import pytest

from judge.authoring.package import PackageError, Problem, all_problem_dirs
from judge.authoring.validate import change_note_check
from tests.factories import make_package
from tests.paths import REPO_ROOT


def versioned(tmp_path: Path, version: int, changes: str) -> Path:
    """The factory's package at `version`, with `changes` (TOML) appended to its problem.toml."""
    pkg = make_package(tmp_path)
    toml = pkg / "problem.toml"
    toml.write_text(toml.read_text().replace("version = 1", f"version = {version}") + "\n" + changes)
    return pkg


NOTE_3 = '[changes.3]\nzh = "新增两个实例交替调用的用例"\nen = "A new case: two instances called in turn"\n'


def test_every_shipped_package_says_what_its_current_version_changed() -> None:
    for folder in all_problem_dirs(REPO_ROOT / "problems"):
        problem = Problem(folder)
        ok, detail = change_note_check(problem)
        assert ok, f"{problem.id}: {detail}"
        if problem.spec.version > 1:
            note = problem.spec.changes[str(problem.spec.version)]
            assert note.zh != note.en and "\n" not in note.zh + note.en


def test_the_notes_of_newer_versions_come_oldest_first(tmp_path: Path) -> None:
    note_2 = '[changes.2]\nzh = "题面说明空输入"\nen = "The statement says what empty inputs give"\n'
    problem = Problem(versioned(tmp_path, 3, NOTE_3 + note_2))
    assert [(n, note.en) for n, note in problem.spec.change_notes(after=1)] == [
        (2, "The statement says what empty inputs give"),
        (3, "A new case: two instances called in turn"),
    ]
    assert [n for n, _ in problem.spec.change_notes(after=2)] == [3]
    assert problem.spec.change_notes(after=3) == []
    assert change_note_check(problem) == (True, "version 3: A new case: two instances called in turn")


def test_a_version_without_its_note_fails_validation_but_still_loads(tmp_path: Path) -> None:
    """The server keeps offering a package whose note is missing; `judge validate` names it."""
    problem = Problem(versioned(tmp_path, 4, NOTE_3))
    ok, detail = change_note_check(problem)
    assert not ok
    assert "version 4 has no change note" in detail and "[changes.4]" in detail


def test_the_first_version_needs_no_note(tmp_path: Path) -> None:
    assert change_note_check(Problem(make_package(tmp_path))) == (True, "version 1: nothing changed yet")


@pytest.mark.parametrize(
    ("changes", "complaint"),
    [
        (NOTE_3.replace("[changes.3]", "[changes.5]"), "not 5"),  # a version the package has not reached
        (NOTE_3.replace("[changes.3]", "[changes.1]"), "not 1"),  # the first version changed nothing
        (NOTE_3.replace("[changes.3]", "[changes.three]"), "changes.three"),
        (NOTE_3.replace('en = "A new case: two instances called in turn"\n', ""), "changes.3.en"),
        (NOTE_3.replace("A new case", "A new\\ncase"), "changes.3.en"),  # one line
        (NOTE_3.replace('zh = "新增两个实例交替调用的用例"', 'zh = ""'), "changes.3.zh"),
        (NOTE_3.replace("two instances", "x" * 200), "changes.3.en"),  # at most 200 characters
        (NOTE_3 + 'fr = "Un nouveau cas"\n', "changes.3.fr"),
    ],
)
def test_a_malformed_note_names_its_field(tmp_path: Path, changes: str, complaint: str) -> None:
    with pytest.raises(PackageError) as err:
        Problem(versioned(tmp_path, 3, changes))
    assert complaint in str(err.value)
