"""The course file (problems/course.toml): the shipped course is whole and in order, and a
broken course or a chapter it does not have is refused with a message that says so."""

from __future__ import annotations

from pathlib import Path

import pytest

from judge.authoring.course import COURSE_FILE, CourseError, course_order, load_course, parse_course
from judge.authoring.package import PackageError, Problem, all_problem_dirs
from tests.factories import make_package
from tests.paths import REPO_ROOT

PROBLEMS = REPO_ROOT / "problems"


def shipped() -> list[Problem]:
    return [Problem(d) for d in all_problem_dirs(PROBLEMS)]


def test_every_shipped_problem_is_in_exactly_one_chapter_of_the_course() -> None:
    course = load_course(PROBLEMS)
    assert course is not None
    numbers = course.numbers()
    assert len(set(numbers)) == len(numbers), numbers
    problems = shipped()
    assert len(problems) >= 16
    by_chapter: dict[int, list[str]] = {n: [] for n in numbers}
    for p in problems:
        chapter = p.chapter
        assert chapter.number is not None, f"{p.id} names no chapter of the course: {p.spec.chapter!r}"
        by_chapter[chapter.number].append(p.id)
    # A chapter without a problem would be an empty heading on the course map.
    assert all(by_chapter.values()), by_chapter
    # Each problem counted once: the chapters' lists add up to the packages.
    assert sorted(i for ids in by_chapter.values() for i in ids) == sorted(p.id for p in problems)


def test_the_chapters_follow_the_course_material() -> None:
    """Chapter 2 is the embedding, 3 RMSNorm, 6 attention, 7 linear attention (as the course's
    own pages say), and the chapters are listed in the order of their numbers."""
    chapter_of = {p.id: p.chapter for p in shipped()}
    assert chapter_of["203"].number == 2 and chapter_of["204"].number == 3
    assert chapter_of["208"].number == chapter_of["209"].number == 6
    assert chapter_of["211"].number == chapter_of["212"].number == chapter_of["218"].number == 7
    course = load_course(PROBLEMS)
    assert course is not None and course.numbers() == sorted(course.numbers())
    assert all(c.en != c.zh or c.zh.isascii() for c in course.chapters), "an English name for each"


def test_prerequisites_come_earlier_in_the_course_and_include_the_parts() -> None:
    problems = {p.id: p for p in shipped()}
    order = course_order((p.id, p.chapter) for p in problems.values())
    for p in problems.values():
        assert set(p.spec.parts) <= set(p.prerequisites)
        for before in p.prerequisites:
            assert before in problems, f"{p.id}: prerequisite {before} is not a package"
            assert order.index(before) < order.index(p.id), f"{p.id} comes before its prerequisite {before}"
    assert problems["208"].prerequisites == ["207"]
    assert problems["209"].prerequisites == ["204", "205", "208"]


def test_the_shipped_course_names_the_model_as_its_capstone() -> None:
    course = load_course(PROBLEMS)
    assert course is not None and course.capstone == "217"
    model = {p.id: p for p in shipped()}[course.capstone]
    assert model.module_name == "qwen.model" and model.part_problems


def test_course_order_is_by_chapter_then_id() -> None:
    order = course_order((p.id, p.chapter) for p in shipped())
    assert order[:5] == ["201", "203", "207", "204", "205"]
    assert order.index("212") < order.index("218") < order.index("213")
    assert order[-1] == "217"


def write_course(root: Path, body: str) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / COURSE_FILE).write_text(body)
    return root


COURSE = '[[chapter]]\nnumber = 1\nzh = "加倍"\nen = "Doubling"\n'


def join_chapter_one(pkg: Path) -> Path:
    """A factory package (chapter "tests") moved into chapter 01 of COURSE."""
    (pkg / "problem.toml").write_text((pkg / "problem.toml").read_text().replace('"tests"', '"01"'))
    return pkg


def test_a_package_in_a_course_names_a_chapter_number_of_it(tmp_path: Path) -> None:
    write_course(tmp_path, COURSE)
    ok = join_chapter_one(make_package(tmp_path, problem_id="901"))
    chapter = Problem(ok).chapter
    assert (chapter.number, chapter.zh, chapter.en, chapter.label) == (1, "加倍", "Doubling", "01 加倍")
    stray = make_package(tmp_path, problem_id="902", slug="stray")
    refused = r"chapter 'tests' is not a chapter number of .*course.toml \(01\)"
    with pytest.raises(PackageError, match=refused):
        Problem(stray)


def test_without_a_course_the_chapter_is_a_free_label(tmp_path: Path) -> None:
    chapter = Problem(make_package(tmp_path)).chapter
    assert (chapter.number, chapter.zh, chapter.en, chapter.label) == (None, "tests", "tests", "tests")


@pytest.mark.parametrize(
    ("body", "complaint"),
    [
        (COURSE + COURSE.replace("Doubling", "Again"), "chapter numbers must be unique: 1 repeat"),
        (COURSE.replace('en = "Doubling"\n', ""), "chapter.0.en"),
        (COURSE + "colour = 'red'\n", "chapter.0.colour"),
        ("chapter = []\n", "chapter"),
        ("[[chapter]\n", "not valid TOML"),
    ],
)
def test_a_broken_course_file_is_refused(tmp_path: Path, body: str, complaint: str) -> None:
    path = write_course(tmp_path, body) / COURSE_FILE
    with pytest.raises(Exception, match=complaint.replace(".", r"\.")):
        parse_course(path)
    with pytest.raises(PackageError, match="course"):
        Problem(make_package(tmp_path))


def test_a_problem_is_not_its_own_prerequisite(tmp_path: Path) -> None:
    pkg = make_package(tmp_path, extra_toml='prerequisites = ["901"]')
    with pytest.raises(PackageError, match="its own prerequisite"):
        Problem(pkg)
    again = make_package(tmp_path / "b", extra_toml='prerequisites = ["203", "203"]')
    with pytest.raises(PackageError, match="must not repeat"):
        Problem(again)


def test_in_a_course_a_prerequisite_names_a_problem_of_it(tmp_path: Path) -> None:
    write_course(tmp_path, COURSE)
    join_chapter_one(make_package(tmp_path, problem_id="901"))
    second = join_chapter_one(
        make_package(tmp_path, problem_id="902", slug="triple", extra_toml='prerequisites = ["901"]')
    )
    assert Problem(second).prerequisites == ["901"]
    (second / "problem.toml").write_text((second / "problem.toml").read_text().replace('"901"', '"990"'))
    with pytest.raises(PackageError, match="prerequisites name no problem beside it: 990"):
        Problem(second)


def test_a_capstone_names_a_problem_of_the_course(tmp_path: Path) -> None:
    path = write_course(tmp_path, COURSE) / COURSE_FILE
    assert parse_course(path).capstone is None  # a course need not have one
    package = join_chapter_one(make_package(tmp_path, problem_id="901"))
    write_course(tmp_path, 'capstone = "901"\n' + COURSE)
    assert parse_course(path).capstone == "901"
    write_course(tmp_path, 'capstone = "90"\n' + COURSE)  # the start of an id is no id
    with pytest.raises(CourseError, match="capstone '90' names no problem beside it"):
        parse_course(path)
    with pytest.raises(PackageError, match="capstone '90'"):
        Problem(package)
