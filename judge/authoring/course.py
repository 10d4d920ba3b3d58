"""The course: its chapters in order (problems/course.toml), and where each problem sits in it.

A package names its chapter by number (`chapter = "03"` in problem.toml); course.toml beside
the packages gives each number its Chinese and English name and puts the chapters in the
order a learner takes them. A problems folder without course.toml (a test's, an author's
scratch folder) has no course: each package's `chapter` is then a free label of its own.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError, field_validator

from judge.core.errors import JudgeError

COURSE_FILE = "course.toml"

NonEmpty = Annotated[str, StringConstraints(min_length=1, strip_whitespace=True)]


class CourseError(JudgeError):
    """A course.toml that cannot be read or breaks the schema; the message says what."""


class ChapterSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    number: int = Field(ge=0, le=99, description="the chapter's number in the course material")
    zh: NonEmpty
    en: NonEmpty


class CourseSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    # In the order a learner takes them, which is the order the site lists them in.
    chapter: list[ChapterSpec] = Field(min_length=1)
    capstone: NonEmpty | None = Field(
        default=None,
        description="the problem that builds the whole model from the others' parts (a problem id)",
    )

    @field_validator("chapter")
    @classmethod
    def _unique_numbers(cls, v: list[ChapterSpec]) -> list[ChapterSpec]:
        numbers = [c.number for c in v]
        repeated = sorted({n for n in numbers if numbers.count(n) > 1})
        if repeated:
            raise ValueError(f"chapter numbers must be unique: {', '.join(map(str, repeated))} repeat")
        return v


@dataclass(frozen=True)
class Chapter:
    """A problem's chapter as readers see it. `number` is None for a free label outside a course;
    `position` orders chapters (a course's first is 0; free labels come after the course's)."""

    number: int | None
    zh: str
    en: str
    position: int

    @property
    def label(self) -> str:
        """The chapter in one string, as the API has always given it: "03 RMSNorm"."""
        return self.zh if self.number is None else f"{self.number:02d} {self.zh}"


def chapter_number(label: str) -> int | None:
    """The chapter number a package's `chapter` names ("03" -> 3), or None for a free label."""
    text = label.strip()
    return int(text) if text.isascii() and text.isdigit() else None


@dataclass(frozen=True)
class Course:
    chapters: tuple[ChapterSpec, ...]
    # The whole model (module qwen.model), built from every other part: the site counts a
    # learner's progress toward it and calls its parts "your model". None: the course has none.
    capstone: str | None = None

    def chapter(self, label: str) -> Chapter | None:
        """The course's chapter that a package's `chapter` names, or None if it names none."""
        number = chapter_number(label)
        for position, spec in enumerate(self.chapters):
            if spec.number == number:
                return Chapter(spec.number, spec.zh, spec.en, position)
        return None

    def numbers(self) -> list[int]:
        return [c.number for c in self.chapters]


def parse_course(path: Path) -> Course:
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise CourseError(f"{path}: cannot read: {exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise CourseError(f"{path}: not valid TOML: {exc}") from exc
    try:
        spec = CourseSpec.model_validate(raw)
    except ValidationError as exc:
        lines = [f"  - {'.'.join(map(str, e['loc'])) or '(top level)'}: {e['msg']}" for e in exc.errors()]
        raise CourseError(f"{path}: invalid course file\n" + "\n".join(lines)) from exc
    if spec.capstone is not None and not _holds_problem(path.parent, spec.capstone):
        raise CourseError(f"{path}: capstone {spec.capstone!r} names no problem beside it")
    return Course(tuple(spec.chapter), spec.capstone)


def _holds_problem(folder: Path, problem_id: str) -> bool:
    """Whether `folder` holds the package of `problem_id` (a folder id-slug with a problem.toml)."""
    return any(
        p.name.split("-", 1)[0] == problem_id and (p / "problem.toml").is_file()
        for p in folder.iterdir()
        if p.is_dir()
    )


def load_course(problems_dir: Path) -> Course | None:
    """The course of a problems folder, or None when it has no course.toml."""
    path = problems_dir / COURSE_FILE
    return parse_course(path) if path.is_file() else None


def resolve_chapter(course: Course | None, label: str) -> Chapter:
    """A package's chapter: the course's when it names one, else its own label, after them."""
    found = course.chapter(label) if course is not None else None
    if found is not None:
        return found
    after = len(course.chapters) if course is not None else 0
    return Chapter(None, label.strip(), label.strip(), after)


def course_order(placed: Iterable[tuple[str, Chapter]]) -> list[str]:
    """Problem ids in course order: by chapter, then by id within a chapter (ids are given in
    the order the problems build on each other). Free labels sort after the course, by name."""
    return [
        problem_id
        for problem_id, _ in sorted(placed, key=lambda item: (item[1].position, item[1].zh, item[0]))
    ]
