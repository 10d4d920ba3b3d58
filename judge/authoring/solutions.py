"""The solutions a learner may read after their own AC: the reference, every accepted
formulation (solutions/accepted/*.py), and a note on why each is right.

The notes are in solutions/notes.toml, one table per file, each in both languages:

    [reference]
    zh = "..."
    en = "..."
    [accepted.div_sqrt_sum]      # solutions/accepted/div_sqrt_sum.py, by stem
    zh = "..."
    en = "..."

`judge validate` refuses a package whose notes are missing, leave a file out, or name a file
that is not there (`notes_check`); the site shows what there is (`read_solutions`) and never
fails a learner's page over a note.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, StringConstraints, ValidationError

from judge.authoring.package import Problem
from judge.core.texts import Text

NOTES_FILE = "solutions/notes.toml"

NonEmpty = Annotated[str, StringConstraints(min_length=1, strip_whitespace=True)]


class _Note(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    zh: NonEmpty
    en: NonEmpty


class _Notes(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    reference: _Note | None = None
    accepted: dict[str, _Note] = {}


@dataclass(frozen=True)
class Solution:
    """One file a learner may read: "reference" or "accepted/<stem>", its code and its note."""

    kind: Literal["reference", "accepted"]
    name: str
    code: str
    note: Text | None  # None: the package has no note for it (validate refuses that)


@dataclass(frozen=True)
class Solutions:
    problem: str
    reference: Solution
    accepted: list[Solution]
    # What is wrong with the notes, one line each; empty for a sound package.
    problems: list[str] = field(default_factory=list)

    @property
    def all(self) -> list[Solution]:
        return [self.reference, *self.accepted]


def _read_notes(problem: Problem) -> tuple[_Notes, list[str]]:
    path = problem.file(NOTES_FILE)
    where = f"problem {problem.id} ({problem.root.name}): {NOTES_FILE}"
    if not path.is_file():
        return _Notes(), [
            f"{where} is missing: write why the reference and each accepted solution are right, "
            "in a [reference] table and one [accepted.<file stem>] table each, with zh and en"
        ]
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        return _Notes(), [f"{where}: cannot read: {exc}"]
    except tomllib.TOMLDecodeError as exc:
        return _Notes(), [f"{where}: not valid TOML: {exc}"]
    try:
        return _Notes.model_validate(raw), []
    except ValidationError as exc:
        return _Notes(), [
            f"{where}: {'.'.join(str(p) for p in err['loc']) or '(top level)'}: {err['msg']}"
            for err in exc.errors()
        ]


def read_solutions(problem: Problem) -> Solutions:
    """The reference and the accepted solutions with their notes, and every problem found."""
    notes, problems = _read_notes(problem)
    where = f"problem {problem.id} ({problem.root.name}): {NOTES_FILE}"
    files = problem.solutions("accepted")
    stems = {f.path.stem for f in files}
    if not problems:
        if notes.reference is None:
            problems.append(f"{where}: no [reference] note")
        problems.extend(
            f"{where}: no [accepted.{stem}] note for solutions/accepted/{stem}.py"
            for stem in sorted(stems - set(notes.accepted))
        )
        problems.extend(
            f"{where}: [accepted.{stem}] names no file (solutions/accepted/{stem}.py is not there)"
            for stem in sorted(set(notes.accepted) - stems)
        )

    def text(note: _Note | None) -> Text | None:
        return Text(note.zh, note.en) if note is not None else None

    ref = problem.reference
    return Solutions(
        problem.id,
        Solution("reference", ref.name, ref.source(), text(notes.reference)),
        [Solution("accepted", f.name, f.source(), text(notes.accepted.get(f.path.stem))) for f in files],
        problems,
    )


def notes_check(problem: Problem) -> tuple[bool, str]:
    """`judge validate`'s "notes" check: (sound, what it says)."""
    found = read_solutions(problem)
    if found.problems:
        return False, "\n".join(found.problems)
    return True, f"a note for the reference and each of {len(found.accepted)} accepted solutions"
