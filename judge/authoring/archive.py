"""Packages that travel: `judge pack` writes one package as a single archive, `judge problems add`
checks one and installs it into a problems folder.

The archive is a gzip-compressed tar rather than a zip: a package is many small text files, which
compress far better as one stream than one by one; a tar member says plainly what it is (file,
link, device), so anything but a file is easy to refuse; and gzip's one timestamp can be fixed,
so packing twice gives the same bytes. Inside, everything sits under one folder `NNN-slug/`,
beside the package's files its manifest `NNN-slug/judge-package.json` (not installed).

Installing never writes outside a fresh folder of its own until the checks pass: the archive is
unpacked (by hand, member by member, never tarfile's extractall) into a hidden staging folder in
the problems folder, which shows the package its neighbours and the course file through links, so
that it loads, finds its parts and is validated just as it will be once in place; then a rename
puts it there (the same file system, so the rename is atomic).
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import io
import json
import os
import shutil
import tarfile
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path, PurePosixPath

from judge import __version__
from judge.authoring.course import COURSE_FILE
from judge.authoring.package import ID_PATTERN, SLUG_PATTERN, PackageError, Problem
from judge.core.errors import JudgeError
from judge.core.messages import msg
from judge.core.texts import Text
from judge.settings import JudgeSettings

MANIFEST = "judge-package.json"
FORMAT = 1  # the manifest's layout; a reader refuses a newer one
# Fixed member metadata: the same files give the same bytes on any machine, at any time.
_MTIME = 0
_FILE_MODE = 0o644
_DIR_MODE = 0o755
# What is never part of a package: caches and what editors and file browsers leave behind.
_DROPPED_DIRS = {"__pycache__"}
_DROPPED_SUFFIXES = (".pyc", ".pyo", "~", ".swp", ".swo", ".tmp", ".orig", ".rej")
_DROPPED_NAMES = {"Thumbs.db", "desktop.ini"}


class ArchiveError(JudgeError):
    """An archive that cannot be packed or installed, said in both languages (`text`); the
    command line says it in the reader's. Nothing was installed."""

    def __init__(self, text: Text) -> None:
        super().__init__(text.en)
        self.text = text


@dataclass(frozen=True)
class Limits:
    """What an archive may unpack to: a package is kilobytes of text and maybe some data."""

    max_entries: int = 5000
    max_bytes: int = 256 * 1024 * 1024
    max_archive_bytes: int = 256 * 1024 * 1024


@dataclass(frozen=True)
class PartNeed:
    """A part problem the package imports (its parts' parts included), as it was when packed."""

    id: str
    slug: str
    version: int

    @property
    def name(self) -> str:
        return f"{self.id}-{self.slug}"


@dataclass(frozen=True)
class Manifest:
    """`judge-package.json`: who the package is and what it needs. `hash` is over the packed
    files as `Problem.own_hash` computes it (so a package without caches or droppings has
    `hash == own_hash`); `content_hash` also covers the parts it was packed with."""

    id: str
    slug: str
    version: int
    hash: str
    content_hash: str
    judge_version: str
    parts: tuple[PartNeed, ...] = ()
    format: int = FORMAT

    @property
    def name(self) -> str:
        return f"{self.id}-{self.slug}"

    def to_json(self) -> bytes:
        record = {
            "format": self.format,
            "id": self.id,
            "slug": self.slug,
            "version": self.version,
            "hash": self.hash,
            "content_hash": self.content_hash,
            "judge_version": self.judge_version,
            "parts": [{"id": p.id, "slug": p.slug, "version": p.version} for p in self.parts],
        }
        return (json.dumps(record, ensure_ascii=False, indent=2, sort_keys=True) + "\n").encode()

    @classmethod
    def from_json(cls, raw: bytes) -> Manifest:
        """The manifest in `raw`; a ValueError says what is wrong with it."""
        record = json.loads(raw.decode("utf-8"))
        if not isinstance(record, dict):
            raise ValueError("not a JSON object")
        if record.get("format") != FORMAT:
            raise ValueError(f"format {record.get('format')!r}, this judge reads format {FORMAT}")
        id_, slug, version = record.get("id"), record.get("slug"), record.get("version")
        if not isinstance(id_, str) or not ID_PATTERN.match(id_):
            raise ValueError(f"id {id_!r} is no problem id")
        if not isinstance(slug, str) or not SLUG_PATTERN.match(slug):
            raise ValueError(f"slug {slug!r} is no slug")
        if not isinstance(version, int) or isinstance(version, bool) or version < 1:
            raise ValueError(f"version {version!r} is no version")
        hashes = [record.get("hash"), record.get("content_hash")]
        if not all(isinstance(h, str) and len(h) == 64 for h in hashes):
            raise ValueError("hash and content_hash must be sha256 hex digests")
        raw_parts = record.get("parts", [])
        if not isinstance(raw_parts, list):
            raise ValueError("parts must be a list")
        parts = []
        for p in raw_parts:
            if not isinstance(p, dict) or not isinstance(p.get("id"), str) or not ID_PATTERN.match(p["id"]):
                raise ValueError(f"part {p!r} names no problem id")
            parts.append(PartNeed(p["id"], str(p.get("slug", "")), int(p.get("version", 0))))
        return cls(
            id_,
            slug,
            version,
            str(hashes[0]),
            str(hashes[1]),
            str(record.get("judge_version", "")),
            tuple(parts),
        )


def is_dropped(rel: PurePosixPath) -> bool:
    """A file a package never carries: caches, hidden files (editors' locks and swaps, .git,
    .DS_Store) and backups."""
    if any(part in _DROPPED_DIRS or part.startswith(".") for part in rel.parts):
        return True
    name = rel.name
    return (
        name in _DROPPED_NAMES
        or name.endswith(_DROPPED_SUFFIXES)
        or (name.startswith("#") and name.endswith("#"))
    )


def package_files(root: Path) -> list[PurePosixPath]:
    """The files of the package at `root` that travel, relative to it, in the order hashed and packed."""
    found = []
    for path in sorted(root.rglob("*")):
        rel = PurePosixPath(path.relative_to(root).as_posix())
        if path.is_file() and not is_dropped(rel):
            found.append(rel)
    return found


def files_hash(root: Path, files: list[PurePosixPath]) -> str:
    """sha256 over each file's relative path and bytes: `Problem.own_hash`'s formula, over `files`."""
    h = hashlib.sha256()
    for rel in sorted(files, key=lambda r: Path(r)):  # Path order, as own_hash sorts its paths
        h.update(rel.as_posix().encode() + b"\0")
        h.update(hashlib.sha256((root / rel).read_bytes()).digest())
    return h.hexdigest()


def default_archive_name(problem: Problem) -> str:
    return f"{problem.id}-{problem.spec.slug}-v{problem.spec.version}.tar.gz"


def manifest_of(problem: Problem) -> Manifest:
    own = files_hash(problem.root, package_files(problem.root))
    # Problem.content_hash's formula over the packed files (a dropping left in the folder is
    # not packed, so it must not count): once installed beside the same parts, the two agree.
    content = hashlib.sha256(own.encode())
    for part in problem.part_problems:
        content.update(f" part {part.id} {part.own_hash}".encode())
    parts = tuple(PartNeed(p.id, p.spec.slug, p.spec.version) for p in problem.part_problems)
    return Manifest(
        id=problem.id,
        slug=problem.spec.slug,
        version=problem.spec.version,
        hash=own,
        content_hash=content.hexdigest() if problem.part_problems else own,
        judge_version=__version__,
        parts=parts,
    )


def pack(problem: Problem, out: Path) -> Manifest:
    """Write `problem` to `out` as a .tar.gz; the same files give the same bytes. The file appears
    whole or not at all (written beside it, then renamed)."""
    files = package_files(problem.root)
    if PurePosixPath(MANIFEST) in files:
        raise ArchiveError(msg("pack_reserved_name", name=MANIFEST))
    manifest = manifest_of(problem)
    top = PurePosixPath(manifest.name)
    buffer = io.BytesIO()
    # filename="" and mtime=0: gzip's header would otherwise carry the name and the time.
    with (
        gzip.GzipFile(filename="", mode="wb", fileobj=buffer, mtime=_MTIME, compresslevel=9) as gz,
        tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar,
    ):
        tar.addfile(_member(str(top), tarfile.DIRTYPE, 0))
        data = manifest.to_json()
        tar.addfile(_member(str(top / MANIFEST), tarfile.REGTYPE, len(data)), io.BytesIO(data))
        for rel in files:
            content = (problem.root / rel).read_bytes()
            tar.addfile(_member(str(top / rel), tarfile.REGTYPE, len(content)), io.BytesIO(content))
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=out.parent, prefix=f".{out.name}.", delete=False) as tmp:
        try:
            tmp.write(buffer.getvalue())
            tmp.close()
            os.chmod(tmp.name, 0o644)  # a file to share: not the temporary file's owner-only mode
            os.replace(tmp.name, out)
        except BaseException:
            Path(tmp.name).unlink(missing_ok=True)
            raise
    return manifest


def _member(name: str, kind: bytes, size: int) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.size, info.mtime = kind, size, _MTIME
    info.mode = _DIR_MODE if kind == tarfile.DIRTYPE else _FILE_MODE
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info


class Outcome(Enum):
    INSTALLED = "installed"
    REPLACED = "replaced"
    ALREADY_INSTALLED = "already installed"


@dataclass(frozen=True)
class Installed:
    """What `install` did: `previous` is the version replaced (REPLACED) or found (ALREADY_INSTALLED)."""

    outcome: Outcome
    manifest: Manifest
    path: Path
    previous: int | None = None

    def text(self) -> Text:
        m = self.manifest
        if self.outcome is Outcome.REPLACED:
            return msg("add_replaced", name=m.name, old=self.previous, version=m.version, path=self.path)
        if self.outcome is Outcome.ALREADY_INSTALLED:
            return msg("add_already", name=m.name, version=m.version)
        return msg("add_installed", name=m.name, version=m.version, path=self.path)


# Given the unpacked package in place among its neighbours: None when it may be installed, else
# why not. `judge problems add --validate` passes one that runs `judge validate`.
Vetting = Callable[[Path], Text | None]


@dataclass
class _Unpacked:
    manifest: Manifest
    files: list[PurePosixPath] = field(default_factory=list)


def install(
    archive: Path,
    problems_dir: Path,
    *,
    replace_older: bool = False,
    vet: Vetting | None = None,
    limits: Limits = Limits(),
) -> Installed:
    """Check `archive` and install its package into `problems_dir`; an ArchiveError says why not
    (and then the problems folder is as it was)."""
    problems_dir = problems_dir.resolve()
    if problems_dir.exists() and not problems_dir.is_dir():
        raise ArchiveError(msg("add_no_folder", folder=problems_dir))
    try:
        # A new problems folder is made: sharing starts with an empty one (docs/authoring.md).
        problems_dir.mkdir(parents=True, exist_ok=True)
        return _install(archive, problems_dir, replace_older, vet, limits)
    except OSError as exc:  # the problems folder's own trouble (permissions, a full disk)
        raise ArchiveError(msg("add_cannot_write", folder=problems_dir, error=exc)) from exc


def _install(
    archive: Path, problems_dir: Path, replace_older: bool, vet: Vetting | None, limits: Limits
) -> Installed:
    with _staging(problems_dir) as staging:
        unpacked = _unpack(archive, staging, limits)
        manifest = unpacked.manifest
        staged = staging / manifest.name
        got = files_hash(staged, unpacked.files)
        if got != manifest.hash:
            raise ArchiveError(msg("add_hash_mismatch", expected=manifest.hash[:16], got=got[:16]))
        existing = _existing(problems_dir, manifest.id)
        previous: int | None = None
        if existing is not None:
            previous = _compare(existing, manifest, replace_older)
            if previous is None:
                return Installed(Outcome.ALREADY_INSTALLED, manifest, existing, manifest.version)
        _show_neighbours(problems_dir, staging, skip=existing)
        _load(staged, manifest, problems_dir)
        if vet is not None:
            refused = vet(staged)
            if refused is not None:
                raise ArchiveError(refused)
        target = problems_dir / manifest.name
        _swap_in(staged, target, existing, staging)
        outcome = Outcome.REPLACED if existing is not None else Outcome.INSTALLED
        return Installed(outcome, manifest, target, previous)


@contextlib.contextmanager
def _staging(problems_dir: Path) -> Iterator[Path]:
    """A hidden folder inside `problems_dir` (the same file system, so the last rename is atomic),
    removed afterwards. Hidden and without a problem.toml: loaders of the folder pass it by."""
    staging = Path(tempfile.mkdtemp(prefix=".judge-add-", dir=problems_dir))
    try:
        yield staging
    finally:
        shutil.rmtree(staging, ignore_errors=True)  # links are removed, never followed


def _unpack(archive: Path, staging: Path, limits: Limits) -> _Unpacked:
    try:
        if archive.stat().st_size > limits.max_archive_bytes:
            raise ArchiveError(
                msg("add_too_large", mib=archive.stat().st_size >> 20, limit=limits.max_archive_bytes >> 20)
            )
        with tarfile.open(archive, mode="r:gz") as tar:
            members = _checked_members(tar, limits)
            top = PurePosixPath(members[0].name).parts[0]
            manifest = _read_manifest(tar, top)
            if top != manifest.name:
                raise ArchiveError(msg("add_entry_outside", name=top, top=manifest.name))
            files = []
            for member in members:
                rel = PurePosixPath(*PurePosixPath(member.name).parts[1:])
                if not member.isfile() or rel == PurePosixPath(MANIFEST) or is_dropped(rel):
                    continue
                _write(tar, member, staging / top / rel)
                files.append(rel)
            (staging / top).mkdir(exist_ok=True)
            return _Unpacked(manifest, files)
    except (OSError, tarfile.TarError, EOFError, gzip.BadGzipFile) as exc:
        raise ArchiveError(msg("add_not_archive", path=archive, error=exc)) from exc


def _checked_members(tar: tarfile.TarFile, limits: Limits) -> list[tarfile.TarInfo]:
    """Every member, refused unless it is a file or folder under one top folder, within limits."""
    members: list[tarfile.TarInfo] = []
    total = 0
    seen: set[PurePosixPath] = set()
    top: str | None = None
    for member in tar:
        members.append(member)
        if len(members) > limits.max_entries:
            raise ArchiveError(
                msg("add_too_many_files", count=f"> {limits.max_entries}", limit=limits.max_entries)
            )
        name = member.name
        path = PurePosixPath(name)
        if name.startswith(("/", "\\")) or path.is_absolute() or (len(name) > 1 and name[1] == ":"):
            raise ArchiveError(msg("add_entry_absolute", name=name))
        if ".." in path.parts or "\\" in name:
            raise ArchiveError(msg("add_entry_parent", name=name))
        if member.issym() or member.islnk():
            raise ArchiveError(msg("add_entry_link", name=name))
        if not (member.isfile() or member.isdir()):
            raise ArchiveError(msg("add_entry_special", name=name))
        parts = [p for p in path.parts if p != "."]
        if top is None:
            top = parts[0] if parts else ""
        if not parts or parts[0] != top or (member.isfile() and len(parts) < 2):
            raise ArchiveError(msg("add_entry_outside", name=name, top=top))
        clean = PurePosixPath(*parts)
        if clean in seen and member.isfile():
            raise ArchiveError(msg("add_entry_twice", name=name))
        seen.add(clean)
        member.name = clean.as_posix()
        total += member.size
        if total > limits.max_bytes:
            raise ArchiveError(msg("add_too_large", mib=f"> {total >> 20}", limit=limits.max_bytes >> 20))
    if not members:
        raise ArchiveError(msg("add_bad_manifest", name=MANIFEST, error="the archive is empty"))
    return members


def _read_manifest(tar: tarfile.TarFile, top: str) -> Manifest:
    name = f"{top}/{MANIFEST}"
    try:
        member = tar.getmember(name)
        f = tar.extractfile(member)
        if f is None:
            raise ValueError("not a file")
        return Manifest.from_json(f.read())
    except KeyError as exc:
        raise ArchiveError(msg("add_bad_manifest", name=name, error="not in the archive")) from exc
    except (ValueError, TypeError) as exc:  # json's and unicode's errors are ValueErrors
        raise ArchiveError(msg("add_bad_manifest", name=name, error=exc)) from exc


def _write(tar: tarfile.TarFile, member: tarfile.TarInfo, dest: Path) -> None:
    source = tar.extractfile(member)
    if source is None:  # a file member always has its data; a broken one is said as one
        raise tarfile.ExtractError(f"{member.name}: no data")
    dest.parent.mkdir(parents=True, exist_ok=True)
    # "x": a name already written (a file where a folder was, or twice) fails, never overwrites.
    with source, dest.open("xb") as out:
        shutil.copyfileobj(source, out)
    dest.chmod(_FILE_MODE)


def _existing(problems_dir: Path, problem_id: str) -> Path | None:
    """The folder of the problems folder that holds id `problem_id`, if one does."""
    for path in sorted(problems_dir.iterdir()):
        if path.is_dir() and not path.name.startswith(".") and path.name.split("-", 1)[0] == problem_id:
            return path
    return None


def _compare(existing: Path, manifest: Manifest, replace_older: bool) -> int | None:
    """The installed version that the archive's newer one replaces; None when the very same
    package is installed; an ArchiveError when it may not be installed over it."""
    if existing.name != manifest.name:
        raise ArchiveError(
            msg(
                "add_id_taken",
                folder=existing.parent,
                existing=existing.name,
                problem=manifest.id,
                name=manifest.name,
            )
        )
    try:
        installed = Problem(existing)
    except PackageError as exc:
        raise ArchiveError(msg("add_installed_broken", existing=existing.name, error=exc)) from exc
    old = installed.spec.version
    if manifest.version < old:
        raise ArchiveError(msg("add_older", name=manifest.name, installed=old, version=manifest.version))
    if manifest.version == old:
        if files_hash(existing, package_files(existing)) == manifest.hash:
            return None
        raise ArchiveError(msg("add_same_version_differs", name=manifest.name, version=old))
    if not replace_older:
        raise ArchiveError(
            msg("add_newer_needs_flag", name=manifest.name, installed=old, version=manifest.version)
        )
    return old


def _show_neighbours(problems_dir: Path, staging: Path, skip: Path | None) -> None:
    """Link the course file and every other package into `staging`, so the staged package sees
    the folder it will live in: its parts, its course's chapters and prerequisites."""
    for path in problems_dir.iterdir():
        if path.name.startswith(".") or path == skip:
            continue
        if path.name == COURSE_FILE or (path.is_dir() and (path / "problem.toml").is_file()):
            (staging / path.name).symlink_to(path, target_is_directory=path.is_dir())


def _load(staged: Path, manifest: Manifest, problems_dir: Path) -> Problem:
    """The staged package, loaded as it will be in place; its parts must be there."""
    try:
        problem = Problem(staged)
    except PackageError as exc:
        raise ArchiveError(msg("add_not_a_package", error=exc)) from exc
    if (problem.id, problem.spec.slug, problem.spec.version) != (
        manifest.id,
        manifest.slug,
        manifest.version,
    ):
        raise ArchiveError(
            msg(
                "add_bad_manifest",
                name=MANIFEST,
                error=f"it says {manifest.name} version {manifest.version}, problem.toml says "
                f"{problem.id}-{problem.spec.slug} version {problem.spec.version}",
            )
        )
    # Each by id, named as the manifest knows it (NNN-slug) when it does.
    needed = {ref: ref for ref in problem.spec.parts} | {p.id: p.name for p in manifest.parts}
    missing = [name for ref, name in needed.items() if not any(problems_dir.glob(f"{ref}-*/problem.toml"))]
    if missing:
        raise ArchiveError(
            msg(
                "add_missing_parts", problem=problem.id, folder=problems_dir, parts=", ".join(sorted(missing))
            )
        )
    try:
        problem.part_problems  # noqa: B018 - the parts load, and import no cycle
    except PackageError as exc:
        raise ArchiveError(msg("add_not_a_package", error=exc)) from exc
    return problem


def _swap_in(staged: Path, target: Path, existing: Path | None, staging: Path) -> None:
    """Rename `staged` to `target`; an `existing` package there is moved aside into `staging`
    first and put back if the rename fails (it goes when `staging` does)."""
    if existing is None:
        os.rename(staged, target)
        return
    backup = staging / f".replaced-{existing.name}"
    os.rename(existing, backup)
    try:
        os.rename(staged, target)
    except OSError:
        os.rename(backup, existing)
        raise


def validation_vet(settings: JudgeSettings) -> Vetting:
    """A Vetting that runs `judge validate` (every check) on the staged package, prints its
    report and refuses an unsound one."""
    # Lazily: validation brings the backends, which packing and a plain install do not need.
    from judge.authoring.validate import Scope, render_validation
    from judge.authoring.validating import Validator

    def vet(staged: Path) -> Text | None:
        validator = Validator(settings, settings.backend, Scope())
        try:
            result = validator.one(staged)
        finally:
            validator.close()
        print(render_validation([result]), flush=True)
        return None if result.ok else msg("add_unsound")

    return vet
