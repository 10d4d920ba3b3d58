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
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from types import ModuleType
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError, field_validator

from judge.casekit import Case, collect_cases

REQUIRED_FILES = ("problem.toml", "statement.zh.md", "starter.py", "reference.py", "cases.py")
ID_PATTERN = re.compile(r"^[0-9]{3,5}$")
SLUG_PATTERN = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")

Identifier = Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")]
DottedName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+$")]
NonEmpty = Annotated[str, StringConstraints(min_length=1, strip_whitespace=True)]


class PackageError(Exception):
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


MutantId = Annotated[str, StringConstraints(pattern=r"^[0-9]+:[0-9]+:[a-z0-9+\-_]+(#[0-9]+)?$")]


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


class ProblemSpec(_Strict):
    id: Annotated[str, StringConstraints(pattern=ID_PATTERN.pattern)]
    slug: Annotated[str, StringConstraints(pattern=SLUG_PATTERN.pattern)]
    version: int = Field(ge=1)
    title: Title
    difficulty: Literal["easy", "medium", "hard"]
    chapter: NonEmpty
    tags: list[NonEmpty] = []
    entry_points: list[Identifier] = Field(min_length=1)
    forbidden: list[DottedName] = []
    points: int = Field(gt=0)
    limits: LimitsSpec = LimitsSpec()
    mutants: MutantsSpec = MutantsSpec()

    @field_validator("entry_points", "forbidden", "tags")
    @classmethod
    def _unique(cls, v: list[str]) -> list[str]:
        if len(set(v)) != len(v):
            raise ValueError("must not repeat a name")
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

    def hint(self) -> str:
        """A wrong solution's module docstring: what a learner whose outputs match it is told."""
        try:
            doc = ast.get_docstring(ast.parse(self.source()))
        except SyntaxError:
            return ""
        return (doc or "").strip()


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

    @property
    def id(self) -> str:
        return self.spec.id

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
        """sha256 over every file's relative path and bytes; what reference caches are keyed by."""
        h = hashlib.sha256()
        for path in sorted(self.root.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts and not path.name.endswith(".pyc"):
                h.update(path.relative_to(self.root).as_posix().encode() + b"\0")
                h.update(hashlib.sha256(path.read_bytes()).digest())
        return h.hexdigest()


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


def all_problem_dirs(problems_dir: Path) -> list[Path]:
    return sorted(p for p in problems_dir.iterdir() if p.is_dir() and (p / "problem.toml").exists())
