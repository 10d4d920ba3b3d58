"""The packages a preview serves: found from DIR, loaded with their errors kept (a broken package
is shown on the page, not left to a log), and a fingerprint of their files that says when to
reload."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from judge.authoring.package import PackageError, Problem, all_problem_dirs
from judge.authoring.statement import problems_in
from judge.authoring.validated import FOLDER as VALIDATED_FOLDER
from judge.cli import UsageError

STATEMENTS = ("statement.zh.md", "statement.en.md")


@dataclass(frozen=True)
class Loaded:
    """One package folder as the preview found it: its problem, or why it does not load, and
    what is wrong with its statements."""

    folder: str
    problem: Problem | None
    error: str | None
    statement_notes: tuple[str, ...]
    missing_statements: tuple[str, ...]


def package_dirs(target: Path) -> list[Path]:
    """DIR itself when it is a package (it holds problem.toml), else the packages in it."""
    if not target.is_dir():
        raise UsageError(f"{target} is not a folder (a package NNN-slug/ or a folder of them)")
    if (target / "problem.toml").exists():
        return [target.resolve()]
    found = all_problem_dirs(target)
    if not found:
        raise UsageError(f"{target} holds no problem package (no problem.toml in it or its folders)")
    return [p.resolve() for p in found]


def problems_folder(target: Path, dirs: list[Path], scratch: Path) -> Path:
    """A folder whose packages are exactly `dirs`: DIR itself for a folder of packages; for one
    package, a folder in `scratch` with a link to it (its siblings are not previewed)."""
    if len(dirs) != 1 or dirs[0] != target.resolve():
        return target.resolve()
    holder = scratch / "problems"
    holder.mkdir()
    (holder / dirs[0].name).symlink_to(dirs[0], target_is_directory=True)
    return holder


def missing_statements(problem_dir: Path) -> tuple[str, ...]:
    """The statement files that are not there (the banner words this in the reader's language)."""
    return tuple(name for name in STATEMENTS if not (problem_dir / name).exists())


def statement_notes(problem_dir: Path) -> tuple[str, ...]:
    """What would stop a statement from showing as meant: Markdown that does not render, as
    `judge validate` says it (KaTeX is checked in the browser, where it renders)."""
    notes: list[str] = []
    for name in STATEMENTS:
        path = problem_dir / name
        if not path.exists():
            continue
        try:
            notes.extend(f"{name}: {p}" for p in problems_in(path.read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError) as exc:
            notes.append(f"{name}: cannot be read ({exc})")
    return tuple(notes)


def load(dirs: list[Path]) -> list[Loaded]:
    """Each package, loaded as `judge serve` loads it (cases imported), or its error."""
    loaded: list[Loaded] = []
    for path in dirs:
        problem: Problem | None = None
        error: str | None = None
        try:
            problem = Problem(path)
            problem.cases  # noqa: B018 - import cases.py now, as the server does: a broken one shows
        except PackageError as exc:
            error = str(exc)
        except Exception as exc:  # an author's file may raise anything on import; show it
            error = f"{type(exc).__name__}: {exc}"
        loaded.append(
            Loaded(
                path.name,
                problem if error is None else None,
                error,
                statement_notes(path),
                missing_statements(path),
            )
        )
    return loaded


def fingerprint(dirs: list[Path], cache_dir: Path) -> str:
    """A hash of every file of the packages (name, size, time of change) and of the validation
    records kept for them: it changes when the author saves a file or a `judge validate` ends."""
    h = hashlib.sha256()
    records = cache_dir / VALIDATED_FOLDER
    for root in dirs:
        files = [p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts]
        files += list(records.glob(f"{root.name.split('-', 1)[0]}-*.json"))
        for path in sorted(files):
            try:
                stat = path.stat()
            except OSError:
                continue  # removed while we looked: the next look sees it gone
            h.update(f"{path}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    return h.hexdigest()[:16]
