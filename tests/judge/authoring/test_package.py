from pathlib import Path

import pytest

from judge.authoring.package import PackageError, Problem, all_problem_dirs, find_problem
from tests.factories import make_package
from tests.paths import REPO_ROOT


def test_the_shipped_problems_load() -> None:
    p = find_problem("204", REPO_ROOT / "problems")
    assert p.spec.entry_points == ["RMSNorm", "GatedRMSNorm", "l2norm"]
    assert sum(c.points for c in p.cases) == p.spec.points == 100
    assert len(p.content_hash) == 64


def test_the_shipped_course_package_is_one_package() -> None:
    """Every shipped problem is a module of qwen/, no two the same, and every part resolves."""
    problems = [Problem(d) for d in all_problem_dirs(REPO_ROOT / "problems")]
    modules = [p.spec.module for p in problems]
    assert all(m is not None and m.startswith("qwen.") for m in modules), modules
    assert len(set(modules)) == len(modules), modules
    for p in problems:
        ids = [part.id for part in p.part_problems]
        assert len(set(ids)) == len(ids) and p.id not in ids


@pytest.mark.parametrize(
    ("toml_edit", "complaint"),
    [
        (('difficulty = "easy"', 'difficulty = "trivial"'), "difficulty"),
        (('entry_points = ["f"]', "entry_points = []"), "entry_points"),
        (("points = 100", "points = -5"), "points"),
        (("time_s = 5", 'time_s = "five"'), "limits.time_s"),
        (('slug = "double"', 'slug = "Double Trouble"'), "slug"),
        (("version = 1", "version = 1\ncolour = 'red'"), "colour"),
        (('entry_points = ["f"]', 'entry_points = ["f", "f"]'), "must not repeat"),
        (("forbidden = []", 'forbidden = ["rms_norm"]'), "forbidden"),
    ],
)
def test_schema_errors_name_the_field(tmp_path: Path, toml_edit: tuple[str, str], complaint: str) -> None:
    pkg = make_package(tmp_path)
    toml = pkg / "problem.toml"
    old, new = toml_edit
    assert old in toml.read_text()
    toml.write_text(toml.read_text().replace(old, new))
    with pytest.raises(PackageError) as err:
        Problem(pkg)
    assert complaint in str(err.value)


def test_not_toml_at_all(tmp_path: Path) -> None:
    pkg = make_package(tmp_path)
    (pkg / "problem.toml").write_text("id = [unclosed")
    with pytest.raises(PackageError, match="not valid TOML"):
        Problem(pkg)


def test_missing_files_and_folder_name(tmp_path: Path) -> None:
    pkg = make_package(tmp_path)
    (pkg / "cases.py").unlink()
    with pytest.raises(PackageError, match=r"missing cases\.py"):
        Problem(pkg)
    other = make_package(tmp_path / "b")
    renamed = other.rename(other.parent / "901-other")
    with pytest.raises(PackageError, match="must be named '901-double'"):
        Problem(renamed)


def test_content_hash_follows_every_file(tmp_path: Path) -> None:
    pkg = make_package(tmp_path)
    before = Problem(pkg).content_hash
    (pkg / "solutions" / "wrong" / "times_three.py").write_text("def f(x):\n    return x\n")
    assert Problem(pkg).content_hash != before


def test_unknown_problem_lists_known_ones() -> None:
    with pytest.raises(PackageError, match="204-rmsnorm"):
        find_problem("999", REPO_ROOT / "problems")


def test_duplicate_case_names_are_refused(tmp_path: Path) -> None:
    cases = (
        "from judge.core.casekit import case\n"
        "@case(points=50)\ndef a(impl, rng):\n    return 1\n"
        "def b(impl, rng):\n    return 2\n"
        "b.__name__ = 'a'\n"
        "b = case(points=50)(b)\n"
    )
    with pytest.raises(PackageError, match="duplicate case names: a"):
        _ = Problem(make_package(tmp_path, cases=cases)).cases
