"""`judge pack` and `judge problems add`: a package as one archive, checked before it is installed."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from judge.authoring.archive import (
    MANIFEST,
    ArchiveError,
    Limits,
    Manifest,
    Outcome,
    install,
    pack,
)
from judge.authoring.package import Problem
from judge.cli import main
from judge.core.messages import msg
from judge.core.texts import Text
from tests.factories import make_package


def packed(root: Path, out: Path, slug: str = "double") -> Path:
    """A package made in `root` and packed to `out`."""
    pkg = make_package(root, slug=slug)
    pack(Problem(pkg), out)
    return out


def bump(pkg: Path, version: int, reference: str | None = None) -> None:
    toml = pkg / "problem.toml"
    toml.write_text(toml.read_text().replace("version = 1", f"version = {version}"))
    if reference is not None:
        (pkg / "reference.py").write_text(reference)


def listing(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


def hand_made(out: Path, entries: list[tuple[tarfile.TarInfo, bytes | None]]) -> Path:
    with tarfile.open(out, "w:gz") as tar:
        for info, data in entries:
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return out


def entry(
    name: str, data: bytes = b"", kind: bytes = tarfile.REGTYPE, link: str = ""
) -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.type, info.size, info.linkname = kind, len(data) if kind == tarfile.REGTYPE else 0, link
    return info, data


def members_of(archive: Path) -> list[tuple[tarfile.TarInfo, bytes | None]]:
    """The members of a real package archive, with their bytes, to build a changed one from."""
    with tarfile.open(archive, "r:gz") as tar:
        return [(m, read(tar, m.name) if m.isfile() else None) for m in tar.getmembers()]


def read(tar: tarfile.TarFile, name: str) -> bytes:
    f = tar.extractfile(name)
    assert f is not None
    return f.read()


def test_pack_holds_the_files_and_a_manifest_and_packs_the_same_bytes_twice(tmp_path: Path) -> None:
    pkg = make_package(tmp_path / "src")
    # What an editor and a run leave behind does not travel.
    (pkg / "__pycache__").mkdir()
    (pkg / "__pycache__" / "cases.cpython-311.pyc").write_bytes(b"\0")
    (pkg / ".reference.py.swp").write_bytes(b"swap")
    (pkg / "cases.py~").write_text("old")
    first = tmp_path / "a.tar.gz"
    manifest = pack(Problem(pkg), first)
    with tarfile.open(first, "r:gz") as tar:
        names = tar.getnames()
        raw = read(tar, f"901-double/{MANIFEST}")
        assert {(m.mtime, m.uid, m.gid, m.uname) for m in tar.getmembers()} == {(0, 0, 0, "")}
    assert names[:2] == ["901-double", f"901-double/{MANIFEST}"]
    assert names[2:] == sorted(names[2:]) and "901-double/reference.py" in names
    assert not any("pycache" in n or n.endswith(("~", ".swp")) for n in names)
    assert Manifest.from_json(raw) == manifest
    assert (manifest.id, manifest.slug, manifest.version, manifest.parts) == ("901", "double", 1, ())

    # Packing again, later, with the files touched, gives the very same bytes.
    os.utime(pkg / "reference.py", (1, 1))
    second = tmp_path / "b.tar.gz"
    pack(Problem(pkg), second)
    assert first.read_bytes() == second.read_bytes()
    # The hash is the package's own (the droppings aside, it is Problem.own_hash).
    for dropping in (pkg / ".reference.py.swp", pkg / "cases.py~"):
        dropping.unlink()
    assert manifest.hash == Problem(pkg).own_hash == manifest.content_hash


def test_install_into_another_folder_then_same_again_is_already_installed(tmp_path: Path) -> None:
    archive = packed(tmp_path / "src", tmp_path / "p.tar.gz")
    dest = tmp_path / "dest"
    dest.mkdir()
    done = install(archive, dest)
    assert done.outcome is Outcome.INSTALLED and done.path == dest / "901-double"
    assert listing(done.path) == {
        k: v for k, v in listing(tmp_path / "src" / "901-double").items() if k != "solutions/accepted"
    }
    assert Problem(done.path).own_hash == done.manifest.hash
    assert sorted(p.name for p in dest.iterdir()) == ["901-double"]  # no staging left behind

    again = install(archive, dest)
    assert again.outcome is Outcome.ALREADY_INSTALLED
    assert "already installed" in again.text().en and "已经安装" in again.text().zh


def test_an_existing_id_is_refused_unless_newer_and_the_newer_replaces_the_old(tmp_path: Path) -> None:
    dest = tmp_path / "dest"
    dest.mkdir()
    make_package(dest, reference="def f(x):\n    return x + x\n")
    before = listing(dest)
    # The same version with other files: refused, and says to bump the version.
    v1 = packed(tmp_path / "src", tmp_path / "v1.tar.gz")
    with pytest.raises(ArchiveError, match="higher version"):
        install(v1, dest)
    # Another slug under the same id: refused whatever its version.
    other = packed(tmp_path / "other", tmp_path / "o.tar.gz", slug="triple")
    with pytest.raises(ArchiveError, match="taken"):
        install(other, dest)
    # A newer version: only when asked to replace.
    src = tmp_path / "src" / "901-double"
    bump(src, 2, "def f(x):\n    return 2 * x\n")
    v2 = tmp_path / "v2.tar.gz"
    pack(Problem(src), v2)
    with pytest.raises(ArchiveError, match="--replace-older") as refused:
        install(v2, dest)
    assert "--replace-older" in refused.value.text.zh
    assert listing(dest) == before

    done = install(v2, dest, replace_older=True)
    assert done.outcome is Outcome.REPLACED and done.previous == 1
    assert Problem(dest / "901-double").spec.version == 2
    assert (dest / "901-double" / "reference.py").read_text() == "def f(x):\n    return 2 * x\n"
    assert sorted(p.name for p in dest.iterdir()) == ["901-double"]  # the backup is gone too
    # Now the older archive is older: refused.
    with pytest.raises(ArchiveError, match="older"):
        install(v1, dest, replace_older=True)


def test_a_tampered_archive_is_refused_by_its_hash(tmp_path: Path) -> None:
    archive = packed(tmp_path / "src", tmp_path / "p.tar.gz")
    changed = [
        (info, b"def f(x):\n    return x * 3\n" if info.name.endswith("reference.py") else data)
        for info, data in members_of(archive)
    ]
    for info, data in changed:
        if data is not None:
            info.size = len(data)
    tampered = hand_made(tmp_path / "t.tar.gz", changed)
    dest = tmp_path / "dest"
    dest.mkdir()
    with pytest.raises(ArchiveError, match="do not match the manifest's hash"):
        install(tampered, dest)
    assert list(dest.iterdir()) == []


def test_a_manifest_that_lies_about_the_version_or_is_missing_is_refused(tmp_path: Path) -> None:
    archive = packed(tmp_path / "src", tmp_path / "p.tar.gz")
    members = members_of(archive)
    for info, data in members:
        if info.name.endswith(MANIFEST) and data is not None:
            lie = data.replace(b'"version": 1', b'"version": 7')
            assert lie != data
            members = [(i, lie if i is info else d) for i, d in members]
            info.size = len(lie)
    lying = hand_made(tmp_path / "lie.tar.gz", members)
    dest = tmp_path / "dest"
    with pytest.raises(ArchiveError, match=r"problem\.toml says 901-double version 1"):
        install(lying, dest)
    without = hand_made(tmp_path / "none.tar.gz", [m for m in members if not m[0].name.endswith(MANIFEST)])
    with pytest.raises(ArchiveError, match="not in the archive"):
        install(without, dest)
    assert list(dest.iterdir()) == []


@pytest.mark.parametrize(
    ("bad", "said"),
    [
        (entry("901-double/../../escaped.py", b"x = 1\n"), "contains .."),
        (entry("/tmp/absolute.py", b"x = 1\n"), "absolute path"),
        (entry("901-double/link.py", kind=tarfile.SYMTYPE, link="/etc/passwd"), "is a link"),
        (entry("901-double/hard.py", kind=tarfile.LNKTYPE, link="901-double/cases.py"), "is a link"),
        (entry("901-double/dev", kind=tarfile.CHRTYPE), "not a regular file"),
        (entry("elsewhere/x.py", b"x = 1\n"), "one top folder"),
    ],
)
def test_unsafe_entries_are_refused_before_anything_is_written(
    tmp_path: Path, bad: tuple[tarfile.TarInfo, bytes], said: str
) -> None:
    archive = packed(tmp_path / "src", tmp_path / "p.tar.gz")
    evil = hand_made(tmp_path / "evil.tar.gz", [*members_of(archive), bad])
    dest = tmp_path / "problems" / "dest"
    dest.mkdir(parents=True)
    with pytest.raises(ArchiveError, match=said):
        install(evil, dest)
    assert list(dest.iterdir()) == []
    assert not (tmp_path / "problems" / "escaped.py").exists()


def test_limits_and_a_file_that_is_no_archive(tmp_path: Path) -> None:
    archive = packed(tmp_path / "src", tmp_path / "p.tar.gz")
    dest = tmp_path / "dest"
    dest.mkdir()
    with pytest.raises(ArchiveError, match="entries, more than the limit of 3"):
        install(archive, dest, limits=Limits(max_entries=3))
    with pytest.raises(ArchiveError, match="unpacks to"):
        install(archive, dest, limits=Limits(max_bytes=100))
    not_one = tmp_path / "notes.tar.gz"
    not_one.write_text("hello")
    with pytest.raises(ArchiveError, match=r"no readable \.tar\.gz package"):
        install(not_one, dest)
    assert list(dest.iterdir()) == []


def test_a_missing_part_is_named_and_a_present_one_lets_it_in(tmp_path: Path) -> None:
    src = tmp_path / "src"
    make_package(src, problem_id="902", slug="half", extra_toml='module = "course.half"')
    user = make_package(src, problem_id="903", slug="uses-half", extra_toml='parts = ["902"]')
    archive = tmp_path / "uses.tar.gz"
    manifest = pack(Problem(user), archive)
    assert [(p.id, p.slug, p.version) for p in manifest.parts] == [("902", "half", 1)]
    assert manifest.content_hash == Problem(user).content_hash != manifest.hash

    dest = tmp_path / "dest"
    dest.mkdir()
    with pytest.raises(ArchiveError, match=r"needs parts that are not in .*: 902-half") as refused:
        install(archive, dest)
    assert "902-half" in refused.value.text.zh
    assert list(dest.iterdir()) == []

    part = tmp_path / "part.tar.gz"
    pack(Problem(src / "902-half"), part)
    install(part, dest)
    done = install(archive, dest)
    assert [p.id for p in Problem(done.path).part_problems] == ["902"]


def test_a_vetting_that_refuses_leaves_the_folder_as_it_was(tmp_path: Path) -> None:
    archive = packed(tmp_path / "src", tmp_path / "p.tar.gz")
    dest = tmp_path / "dest"
    dest.mkdir()
    seen: list[Path] = []

    def refuse(staged: Path) -> Text | None:
        # What --validate's vetting sees: the package loadable where it is staged.
        seen.append(staged)
        return msg("add_unsound") if Problem(staged).id == "901" else None

    with pytest.raises(ArchiveError, match="not sound"):
        install(archive, dest, vet=refuse)
    assert seen and seen[0].parent.parent == dest.resolve() and not seen[0].exists()
    assert list(dest.iterdir()) == []


def test_the_commands_pack_and_add_for_real(tmp_path: Path) -> None:
    make_package(tmp_path / "src")
    env = {
        **os.environ,
        "JUDGE_CACHE_DIR": str(tmp_path / "cache"),
        "JUDGE_PROBLEMS_DIR": str(tmp_path / "src"),
    }

    def judge(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "judge", *args],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
            timeout=300,
        )

    res = judge("pack", "901", "--lang", "en")
    assert res.returncode == 0, res.stderr
    archive = tmp_path / "901-double-v1.tar.gz"
    assert archive.is_file() and f"packed {archive}" in res.stdout
    res = judge("problems", "add", str(archive), "--problems-dir", "dest")  # made, as it is new
    assert res.returncode == 0, res.stderr
    assert "已安装 901-double 第 1 版" in res.stdout and "judge problems sync" in res.stdout
    assert Problem(tmp_path / "dest" / "901-double").spec.version == 1
    res = judge("problems", "add", str(archive), "--problems-dir", "dest", "--lang", "en")
    assert res.returncode == 0 and "already installed" in res.stdout


def test_refusals_are_one_line_in_the_chosen_language_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    archive = hand_made(tmp_path / "evil.tar.gz", [entry("901-double/../x.py", b"")])
    (tmp_path / "dest").mkdir()
    assert main(["problems", "add", str(archive), "--problems-dir", str(tmp_path / "dest")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "拒绝" in err and "refused" not in err
    assert (
        main(["problems", "add", str(archive), "--problems-dir", str(tmp_path / "dest"), "--lang", "en"]) == 2
    )
    err = capsys.readouterr().err.strip()
    assert "refused: entry 901-double/../x.py contains .." in err and "拒绝" not in err
