"""Problem packages: folders under problems/ with a schema-checked problem.toml.

problems/204-rmsnorm/
  problem.toml  statement.zh.md  statement.en.md (optional)  starter.py  reference.py  cases.py
  solutions/accepted/*.py   solutions/wrong/*.py (module docstring = hint)
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import re
import sys
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path, PurePosixPath
from types import ModuleType
from typing import Annotated, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    field_validator,
    model_validator,
)

from judge.authoring.course import Chapter, Course, CourseError, load_course, resolve_chapter
from judge.core.casekit import Case, collect_cases
from judge.core.errors import JudgeError
from judge.core.runner.job import PartSource
from judge.core.runner.scratch import MAX_SNIPPET
from judge.core.texts import EMPTY, Text, parse_author_text

REQUIRED_FILES = ("problem.toml", "statement.zh.md", "starter.py", "reference.py", "cases.py")
ID_PATTERN = re.compile(r"^[0-9]{3,5}$")
SLUG_PATTERN = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")

Identifier = Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")]
DottedName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+$")]
NonEmpty = Annotated[str, StringConstraints(min_length=1, strip_whitespace=True)]


class PackageError(JudgeError):
    """A package that cannot be loaded; the message lists every problem found."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Title(_Strict):
    zh: NonEmpty
    en: NonEmpty


class LimitsSpec(_Strict):
    time_s: float = Field(
        5.0, gt=0, le=120, description="wall time for the learner's code, all cases together"
    )
    memory_mb: int = Field(1024, ge=64, le=16384)
    output_kb: int = Field(64, ge=1, le=16384, description="what the learner may print")


MutantId = Annotated[
    str,
    StringConstraints(pattern=r"^([0-9]+:[0-9]+|(<module>|\w+(\.\w+)*)/[0-9a-z.]+):[a-z0-9+\-_]+(#[0-9]+)?$"),
]


class EquivalentMutant(_Strict):
    """A mutant of the reference that no case can tell apart from it, and why."""

    id: MutantId
    reason: NonEmpty


class MutantsSpec(_Strict):
    equivalent: list[EquivalentMutant] = []

    @field_validator("equivalent")
    @classmethod
    def _unique_ids(cls, v: list[EquivalentMutant]) -> list[EquivalentMutant]:
        if len({e.id for e in v}) != len(v):
            raise ValueError("must not declare a mutant twice")
        return v


class Lowered(_Strict):
    """A bar of `judge validate` a package lowers, and why (the admin page shows the reason)."""

    value: int = Field(ge=0)
    reason: Reason

    @field_validator("reason")
    @classmethod
    def _written(cls, v: str) -> str:
        if v.upper().startswith("TODO"):
            raise ValueError("the reason is still TODO: say why this package needs fewer")
        return v


class ValidationSpec(_Strict):
    """`[validation]`: the coverage bars a small package may lower, each with its reason. The
    defaults and floors are judge.authoring.validation.files' (docs/authoring.md says why);
    `judge validate` refuses a value above the default (it lowers nothing) or below the floor."""

    min_public: Lowered | None = None
    min_hidden: Lowered | None = None
    min_accepted: Lowered | None = None
    min_wrong: Lowered | None = None

    def lowered(self) -> dict[str, Lowered]:
        """The bars this package lowers, by name (`min_hidden`, ...)."""
        return {
            name: bar
            for name, bar in (
                ("min_public", self.min_public),
                ("min_hidden", self.min_hidden),
                ("min_accepted", self.min_accepted),
                ("min_wrong", self.min_wrong),
            )
            if bar is not None
        }


# The properties of the cases that `judge validate` checks (judge.authoring.properties, issue 28). A package
# may waive one, or one argument (`"arguments:RMSNorm.eps"`), where its statement rules the property
# out, with the reason in words: `[waivers]` maps the name to it, and the admin page shows it.
PROPERTY_NAMES = (
    "arguments",
    "repeated_calls",
    "param_edit",
    "non_contiguous",
    "batch",
    "length_one",
    "two_instances",
)
ARGUMENT_WAIVER_KEY = re.compile(r"^arguments:[A-Za-z_][A-Za-z0-9_]*(\(\))?(\.[A-Za-z_][A-Za-z0-9_]*)+$")
# A written reason: a sentence, not a word or a placeholder.
Reason = Annotated[str, StringConstraints(min_length=10, strip_whitespace=True)]

# A change note: one line of at most 200 characters (the problem list shows it under a title).
OneLine = Annotated[
    str, StringConstraints(min_length=1, max_length=200, strip_whitespace=True, pattern=r"^[^\n\r]+$")
]
VersionKey = Annotated[str, StringConstraints(pattern=r"^[1-9][0-9]*$")]


class ChangeNote(_Strict):
    """What a new version of a package changed, in one line per language: a learner whose best
    accepted Submit was judged on an older version reads it beside the problem."""

    zh: OneLine
    en: OneLine


# A snippet of the scratch cell ("Try your input"), at most as long as the cell takes.
Snippet = Annotated[str, StringConstraints(min_length=1, max_length=MAX_SNIPPET)]


class ScratchSpec(_Strict):
    """What the scratch cell offers a learner, written by the author (`[scratch]`): the snippet it
    opens with (a public case's call, shortened, that runs against the reference and shows
    something worth reading), and for some public cases the call that case makes, filled in by
    "use public case" (`[scratch.cases]`, keyed by the case's name). `judge validate` runs each
    one against the reference in the sandbox, as the cell would, and checks that each key names
    a public case: a hidden case's call never reaches a learner."""

    example: Snippet
    cases: dict[Identifier, Snippet] = {}

    @field_validator("example", "cases")
    @classmethod
    def _written(cls, v: str | dict[str, str]) -> str | dict[str, str]:
        blank = [v] if isinstance(v, str) else list(v.values())
        if any(not s.strip() for s in blank):
            raise ValueError("a snippet must hold code: a public case's call, shortened")
        return v


class ProblemSpec(_Strict):
    id: Annotated[str, StringConstraints(pattern=ID_PATTERN.pattern)]
    slug: Annotated[str, StringConstraints(pattern=SLUG_PATTERN.pattern)]
    version: int = Field(ge=1)
    title: Title
    difficulty: Literal["easy", "medium", "hard"]
    # In a course (problems/course.toml beside the packages): the chapter's number, "03".
    # Outside one: a free label.
    chapter: NonEmpty
    tags: list[NonEmpty] = []
    entry_points: list[Identifier] = Field(min_length=1)
    # The module this problem's solution is in the course package (qwen.norm for 204), and the
    # part problems whose modules a solution may import (their solutions are provided).
    module: DottedName | None = None
    parts: list[Annotated[str, StringConstraints(pattern=ID_PATTERN.pattern)]] = []
    # Problems the course asks for first although a solution does not import them (208 builds
    # on 207's stable softmax); the parts are prerequisites already and need not be repeated.
    prerequisites: list[Annotated[str, StringConstraints(pattern=ID_PATTERN.pattern)]] = []
    # Package files or folders the cases read inside the sandbox (judge.core.casekit.data_path).
    data: list[NonEmpty] = []
    forbidden: list[DottedName] = []
    points: int = Field(gt=0)
    limits: LimitsSpec = LimitsSpec()
    mutants: MutantsSpec = MutantsSpec()
    waivers: dict[str, Reason] = {}
    # One note per version after the first (`[changes.3]` zh = "...", en = "..."): what that
    # version changed. `judge validate` asks for the current version's; older ones may stay.
    changes: dict[VersionKey, ChangeNote] = {}
    # The scratch cell's snippets (ScratchSpec); a package without them opens the cell on a
    # generic snippet, and `judge validate` warns.
    scratch: ScratchSpec | None = None
    # Coverage bars lowered for a small package, each with its reason (ValidationSpec).
    validation: ValidationSpec = ValidationSpec()

    @field_validator("entry_points", "forbidden", "tags", "parts", "prerequisites", "data")
    @classmethod
    def _unique(cls, v: list[str]) -> list[str]:
        if len(set(v)) != len(v):
            raise ValueError("must not repeat a name")
        return v

    @field_validator("waivers")
    @classmethod
    def _known_properties(cls, v: dict[str, str]) -> dict[str, str]:
        unknown = [k for k in v if k not in PROPERTY_NAMES and not ARGUMENT_WAIVER_KEY.match(k)]
        if unknown:
            raise ValueError(
                f"waives no known property: {', '.join(map(repr, unknown))} (properties: "
                f'{", ".join(PROPERTY_NAMES)}; one argument: "arguments:Entry.param" or '
                f'"arguments:Entry.method.param")'
            )
        if any(reason.upper().startswith("TODO") for reason in v.values()):
            raise ValueError("a waiver's reason is still TODO: say why the statement rules the property out")
        return v

    @model_validator(mode="after")
    def _notes_of_versions(self) -> ProblemSpec:
        wrong = sorted(
            (k for k in self.changes if not 2 <= int(k) <= self.version),
            key=int,
        )
        if wrong:
            raise ValueError(
                f"changes: a note is for a version from 2 to the package's version ({self.version}), "
                f"not {', '.join(wrong)}"
            )
        return self

    def change_notes(self, after: int) -> list[tuple[int, ChangeNote]]:
        """The notes of the versions newer than `after`, oldest first."""
        return sorted((int(k), note) for k, note in self.changes.items() if int(k) > after)

    @field_validator("data")
    @classmethod
    def _inside(cls, v: list[str]) -> list[str]:
        for rel in v:
            path = PurePosixPath(rel)
            if path.is_absolute() or ".." in path.parts or "\\" in rel:
                raise ValueError(f"{rel!r} must be a relative path inside the package")
        return v


def parse_spec(path: Path) -> ProblemSpec:
    """Read and check problem.toml; every schema problem is named in one PackageError."""
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise PackageError(f"{path}: cannot read: {exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise PackageError(f"{path}: not valid TOML: {exc}") from exc
    try:
        return ProblemSpec.model_validate(raw)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            where = ".".join(str(p) for p in err["loc"]) or "(top level)"
            got = f" (got {err['input']!r})" if err["type"] != "missing" and "input" in err else ""
            problems.append(f"  - {where}: {err['msg']}{got}")
        raise PackageError(f"{path}: invalid problem.toml\n" + "\n".join(problems)) from exc


@dataclass(frozen=True)
class SolutionFile:
    kind: Literal["reference", "starter", "accepted", "wrong"]
    path: Path

    @property
    def name(self) -> str:
        return self.kind if self.kind in ("reference", "starter") else f"{self.kind}/{self.path.stem}"

    def source(self) -> str:
        return self.path.read_text(encoding="utf-8")

    def hint(self) -> Text:
        """A wrong solution's module docstring: what a learner whose outputs match it is told. A
        Chinese paragraph, then the English one (docs/authoring.md), parsed here, where it is
        read (judge.core.texts.parse_author_text); EMPTY when there is none."""
        try:
            doc = ast.get_docstring(ast.parse(self.source()))
        except SyntaxError:
            return EMPTY
        return parse_author_text(doc) if doc and doc.strip() else EMPTY


class Problem:
    """A loaded package. Construction checks the files and the schema; cases load on first use."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        if not self.root.is_dir():
            raise PackageError(f"{root}: not a problem package folder")
        missing = [f for f in REQUIRED_FILES if not (self.root / f).is_file()]
        if missing:
            raise PackageError(f"{root}: missing {', '.join(missing)}")
        self.spec = parse_spec(self.root / "problem.toml")
        expected_name = f"{self.spec.id}-{self.spec.slug}"
        if self.root.name != expected_name:
            raise PackageError(f"{root}: folder must be named {expected_name!r} (id-slug from problem.toml)")
        absent = [rel for rel in self.spec.data if not (self.root / rel).exists()]
        if absent:
            raise PackageError(f"{root}: data not in the package: {', '.join(absent)}")
        if self.spec.id in self.spec.parts:
            raise PackageError(f"{root}: a problem cannot be its own part")
        if self.spec.id in self.spec.prerequisites:
            raise PackageError(f"{root}: a problem cannot be its own prerequisite")
        if self.course is not None and self.course.chapter(self.spec.chapter) is None:
            numbers = ", ".join(f"{n:02d}" for n in self.course.numbers())
            raise PackageError(
                f"{root}: chapter {self.spec.chapter!r} is not a chapter number of "
                f"{self.root.parent / 'course.toml'} ({numbers})"
            )
        if self.course is not None:
            # In a course the prerequisites are its problems: a misspelt id would vanish quietly.
            unknown = [
                p for p in self.spec.prerequisites if not any(self.root.parent.glob(f"{p}-*/problem.toml"))
            ]
            if unknown:
                raise PackageError(f"{root}: prerequisites name no problem beside it: {', '.join(unknown)}")

    @property
    def id(self) -> str:
        return self.spec.id

    @cached_property
    def course(self) -> Course | None:
        """The course of the folder this package is in (its course.toml), if it has one."""
        try:
            return load_course(self.root.parent)
        except CourseError as exc:
            raise PackageError(str(exc)) from exc

    @property
    def chapter(self) -> Chapter:
        return resolve_chapter(self.course, self.spec.chapter)

    @property
    def prerequisites(self) -> list[str]:
        """What to solve first: every part a solution may import (parts of parts too: the parts
        panel's list, so the page shows one list), then the declared extras."""
        try:
            parts = [p.id for p in self.part_problems]
        except PackageError:  # a part not beside it (a package on its own): the declared ones
            parts = list(self.spec.parts)
        return list(dict.fromkeys([*parts, *self.spec.prerequisites]))

    @property
    def max_score(self) -> int:
        return self.spec.points

    def file(self, name: str) -> Path:
        return self.root / name

    def read(self, name: str) -> str:
        return self.file(name).read_text(encoding="utf-8")

    @cached_property
    def cases_module(self) -> ModuleType:
        """The author's cases.py, imported in the judge (trusted) to learn the case table."""
        name = f"judge_problem_cases_{self.spec.id}_{self.content_hash[:12]}"
        if name in sys.modules:
            return sys.modules[name]
        spec = importlib.util.spec_from_file_location(name, self.file("cases.py"))
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(module)
        except Exception as exc:
            raise PackageError(
                f"{self.file('cases.py')}: cannot import: {type(exc).__name__}: {exc}"
            ) from exc
        sys.modules[name] = module
        return module

    @cached_property
    def cases(self) -> list[Case]:
        try:
            found = collect_cases(self.cases_module)
        except ValueError as exc:
            raise PackageError(f"{self.file('cases.py')}: {exc}") from exc
        if not found:
            raise PackageError(f"{self.file('cases.py')}: declares no cases (use @case)")
        return found

    def select_cases(self, which: Literal["public", "all"]) -> list[Case]:
        return [c for c in self.cases if which == "all" or c.public]

    def solutions(self, kind: Literal["accepted", "wrong"]) -> list[SolutionFile]:
        folder = self.root / "solutions" / kind
        return [SolutionFile(kind, p) for p in sorted(folder.glob("*.py"))] if folder.is_dir() else []

    @property
    def reference(self) -> SolutionFile:
        return SolutionFile("reference", self.file("reference.py"))

    @property
    def starter(self) -> SolutionFile:
        return SolutionFile("starter", self.file("starter.py"))

    @cached_property
    def content_hash(self) -> str:
        """sha256 over every file's relative path and bytes, and over the packages of its parts
        (their references are part of what the trusted run computes); what reference caches
        and the problem's version are keyed by."""
        if not self.part_problems:
            return self.own_hash
        h = hashlib.sha256(self.own_hash.encode())
        for part in self.part_problems:
            h.update(f" part {part.id} {part.own_hash}".encode())
        return h.hexdigest()

    @cached_property
    def own_hash(self) -> str:
        """sha256 over this package's files alone: each one's relative path and bytes."""
        h = hashlib.sha256()
        for path in sorted(self.root.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts and not path.name.endswith(".pyc"):
                h.update(path.relative_to(self.root).as_posix().encode() + b"\0")
                h.update(hashlib.sha256(path.read_bytes()).digest())
        return h.hexdigest()

    @cached_property
    def part_problems(self) -> list[Problem]:
        """Every part a solution may import: the declared ones and, in turn, theirs; found
        beside this package (a course's problems share one folder), in dependency order."""
        return part_closure(self, lambda ref: find_problem(ref, self.root.parent))

    def reference_parts(self) -> list[PartSource]:
        """The parts as authors and validation run them: each part problem's reference."""
        return [
            PartSource(p.id, p.module_name, p.reference.source(), "reference") for p in self.part_problems
        ]

    @property
    def module_name(self) -> str:
        if self.spec.module is None:
            raise PackageError(f"{self.root}: problem {self.id} is used as a part but declares no module")
        return self.spec.module

    def data(self) -> dict[str, bytes]:
        """The data files the cases read, by path relative to the package (folders expanded)."""
        files: dict[str, bytes] = {}
        for rel in self.spec.data:
            path = self.root / rel
            found = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
            for f in found:
                files[f.relative_to(self.root).as_posix()] = f.read_bytes()
        return files


def find_problem(ref: str, problems_dir: Path) -> Problem:
    """`ref` is a package folder, or an id such as 204 that names one under `problems_dir`."""
    as_path = Path(ref)
    if as_path.is_dir() and (as_path / "problem.toml").exists():
        return Problem(as_path)
    if not problems_dir.is_dir():
        raise PackageError(f"problems folder {problems_dir} does not exist")
    matches = sorted(
        p for p in problems_dir.iterdir() if p.is_dir() and (p.name.split("-", 1)[0] == ref or p.name == ref)
    )
    if not matches:
        known = ", ".join(sorted(p.name for p in problems_dir.iterdir() if (p / "problem.toml").exists()))
        raise PackageError(f"no problem {ref!r} in {problems_dir} (known: {known or 'none'})")
    if len(matches) > 1:
        raise PackageError(f"problem id {ref!r} is ambiguous: {', '.join(m.name for m in matches)}")
    return Problem(matches[0])


def part_closure(problem: Problem, find: Callable[[str], Problem]) -> list[Problem]:
    """`problem`'s parts and theirs, each once, every part after the parts it imports.
    A cycle or a part that names no package is a PackageError."""
    ordered: list[Problem] = []
    seen: set[str] = set()

    def visit(p: Problem, path: tuple[str, ...]) -> None:
        for ref in p.spec.parts:
            if ref in path:
                raise PackageError(f"problem {problem.id}: parts form a cycle: {' -> '.join((*path, ref))}")
            if ref in seen:
                continue
            try:
                part = find(ref)
            except PackageError as exc:
                raise PackageError(
                    f"problem {p.id} declares part {ref}, which cannot be found: {exc}"
                ) from exc
            visit(part, (*path, ref))
            seen.add(ref)
            part.module_name  # noqa: B018 (checks that the part names its module)
            ordered.append(part)

    visit(problem, (problem.id,))
    return ordered


def all_problem_dirs(problems_dir: Path) -> list[Path]:
    return sorted(p for p in problems_dir.iterdir() if p.is_dir() and (p / "problem.toml").exists())
