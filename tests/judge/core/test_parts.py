"""Parts: a problem's solution imports other problems' solutions as modules of the course package.

Two tiny packages side by side: 901 doubles (module course.double), 902 adds one to what 901's
part returns (it declares parts = ["901"]). Judged on the local backend here; the Docker run is
in tests/sandbox (parts and data travel in the job like the solution itself).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from judge.authoring.package import PackageError, Problem
from judge.core.backend import Backend
from judge.core.grading import judge_source
from judge.core.runner.job import PartSource
from judge.core.verdicts import Verdict
from judge.expected import ExpectedStore
from tests.factories import judge, local_backend, make_package
from tests.paths import REPO_ROOT

PLUS_ONE_CASES = """
from judge.core.casekit import case

@case(points=60, public=True)
def plus_one(impl, rng):
    return {"y": impl.f(rng.normal(4, 8))}

@case(points=40)
def plus_one_again(impl, rng):
    return {"y": impl.f(rng.normal(3, 5))}
"""
USES_PART = "from course.double import f as double\n\n\ndef f(x):\n    return double(x) + 1\n"
MY_DOUBLE = {"problem": "901", "module": "course.double", "origin": "learner", "used": True}
INLINE = "def f(x):\n    return 2 * x + 1\n"


def course(root: Path, user_extra: str = 'parts = ["901"]') -> tuple[Problem, Problem]:
    """The part (901, module course.double) and the problem that uses it (902)."""
    part = make_package(root, problem_id="901", slug="double", extra_toml='module = "course.double"')
    user = make_package(
        root,
        problem_id="902",
        slug="plus-one",
        cases=PLUS_ONE_CASES,
        reference=USES_PART,
        wrong={"plus_two": '"""加了 2 / You added 2."""\ndef f(x):\n    return 2 * x + 2\n'},
        extra_toml=f'module = "course.plus_one"\n{user_extra}',
    )
    return Problem(part), Problem(user)


Shared = tuple[Problem, ExpectedStore]


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> tuple[Problem, ExpectedStore]:
    """One course and one store for the judging tests: the trusted run happens once."""
    root = tmp_path_factory.mktemp("course")
    _, user = course(root)
    return user, ExpectedStore(root / "cache")


def judged(shared: Shared, source: str, parts: list[PartSource]) -> dict:
    user, store = shared
    return judge_source(user, source, local_backend(), store, parts=parts).to_dict("en")


def test_a_solution_imports_its_part_and_the_report_says_whose_it_was(
    shared: tuple[Problem, ExpectedStore],
) -> None:
    mine = PartSource("901", "course.double", "def f(x):\n    return x + x\n", "learner")
    report = judged(shared, USES_PART, [mine])
    assert report["verdict"] == "AC", report
    assert report["parts"] == [MY_DOUBLE]


def test_a_wrong_part_makes_the_solution_wrong(shared: Shared) -> None:
    wrong = PartSource("901", "course.double", "def f(x):\n    return x * 3\n", "learner")
    assert judged(shared, USES_PART, [wrong])["verdict"] == "WA"


def test_a_missing_part_is_named_with_a_link(shared: Shared) -> None:
    report = judged(shared, USES_PART, [PartSource("901", "course.double", None, "missing")])
    assert report["verdict"] == "CE"
    message = report["cases"][0]["message"]
    assert "course.double" in message and "problem 901" in message and "/problems/901" in message
    assert report["parts"][0]["origin"] == "missing" and not report["parts"][0]["used"]
    # The problem to solve first is a field of each case: the page links it without reading text.
    assert [c["missing_problem"] for c in report["cases"]] == ["901", "901"]
    assert [c["line"] for c in report["cases"]] == [None, None]


def test_a_part_missing_when_a_case_imports_it_names_the_problem_too(shared: Shared) -> None:
    """Imported inside the entry point, not at the top: the case that runs it fails (RE) and
    names the problem, as a load that imports it does."""
    lazy = "def f(x):\n    from course.double import f as double\n    return double(x) + 1\n"
    report = judged(shared, lazy, [PartSource("901", "course.double", None, "missing")])
    public = report["cases"][0]
    assert public["verdict"] == "RE" and public["missing_problem"] == "901", public
    assert public["line"] == 2  # the import in their file
    assert report["cases"][1]["missing_problem"] is None  # the hidden case, sealed: not told


def test_a_solution_that_solves_it_names_no_problem(shared: Shared) -> None:
    report = judged(shared, INLINE, [PartSource("901", "course.double", None, "missing")])
    assert [c["missing_problem"] for c in report["cases"]] == [None, None]


def test_a_solution_that_writes_the_part_itself_needs_none(shared: Shared) -> None:
    report = judged(shared, INLINE, [PartSource("901", "course.double", None, "missing")])
    assert report["verdict"] == "AC" and report["parts"][0]["used"] is False


def test_tracebacks_show_the_learners_part_but_never_a_reference_part(
    shared: tuple[Problem, ExpectedStore],
) -> None:
    broken = "def f(x):\n    return x.no_such_method()\n"
    mine = judged(shared, USES_PART, [PartSource("901", "course.double", broken, "learner")])
    message = mine["cases"][0]["message"]
    assert mine["verdict"] == "RE" and 'File "course/double.py", line 2' in message, message
    assert mine["cases"][0]["line"] is None  # the error is in their part, not in this file
    theirs = judged(shared, USES_PART, [PartSource("901", "course.double", broken, "reference")])
    assert "course/double.py" not in theirs["cases"][0]["message"]


def test_judge_run_uses_the_parts_references_by_default(tmp_path: Path) -> None:
    part, user = course(tmp_path)
    report = judge(user, USES_PART, ExpectedStore(tmp_path / "cache"))
    assert report.verdict == Verdict.AC
    assert [(p.problem, p.origin, p.used) for p in report.parts] == [("901", "reference", True)]
    assert user.reference_parts()[0].source == part.reference.source()


def test_a_parts_reference_is_part_of_the_problems_version(tmp_path: Path) -> None:
    part, user = course(tmp_path)
    before = user.content_hash
    (part.root / "reference.py").write_text("def f(x):\n    return x * 2.0\n")
    assert Problem(user.root).content_hash != before
    assert Problem(user.root).own_hash == user.own_hash


@pytest.mark.parametrize(
    ("parts", "error"),
    [
        ('parts = ["903"]', "declares part 903, which cannot be found"),
        ('parts = ["902"]', "cannot be its own part"),
    ],
)
def test_bad_parts_are_refused_clearly(tmp_path: Path, parts: str, error: str) -> None:
    make_package(tmp_path, problem_id="901", slug="double", extra_toml='module = "course.double"')
    pkg = make_package(tmp_path, problem_id="902", slug="plus-one", extra_toml=parts)
    with pytest.raises(PackageError, match=error):
        Problem(pkg).part_problems  # noqa: B018


def test_a_cycle_and_a_part_without_a_module_are_refused(tmp_path: Path) -> None:
    make_package(tmp_path, problem_id="901", slug="a", extra_toml='module = "c.a"\nparts = ["902"]')
    b = make_package(tmp_path, problem_id="902", slug="b", extra_toml='module = "c.b"\nparts = ["901"]')
    with pytest.raises(PackageError, match="cycle: 902 -> 901 -> 902"):
        Problem(b).part_problems  # noqa: B018
    make_package(tmp_path, problem_id="904", slug="plain")
    c = make_package(tmp_path, problem_id="905", slug="c", extra_toml='parts = ["904"]')
    with pytest.raises(PackageError, match="declares no module"):
        Problem(c).part_problems  # noqa: B018


DATA_CASES = """
from judge.core.casekit import case, data_path

@case(points=100, public=True)
def scaled(impl, rng):
    scale = float((data_path("tables") / "scale.txt").read_text())
    return {"y": impl.f(rng.normal(4, 8)) * scale}
"""


def test_data_files_reach_the_cases(tmp_path: Path) -> None:
    pkg = make_package(tmp_path, cases=DATA_CASES, extra_toml='data = ["tables"]')
    (pkg / "tables").mkdir()
    (pkg / "tables" / "scale.txt").write_text("3.5\n")
    problem = Problem(pkg)
    assert problem.data() == {"tables/scale.txt": b"3.5\n"}
    store = ExpectedStore(tmp_path / "cache")
    assert judge(problem, "def f(x):\n    return x * 2\n", store).verdict == Verdict.AC
    assert judge(problem, "def f(x):\n    return x * 3\n", store).verdict == Verdict.WA


def test_data_outside_the_package_is_refused(tmp_path: Path) -> None:
    pkg = make_package(tmp_path, extra_toml='data = ["../secrets"]')
    with pytest.raises(PackageError, match="relative path inside the package"):
        Problem(pkg)
    pkg = make_package(tmp_path, problem_id="903", extra_toml='data = ["absent.bin"]')
    with pytest.raises(PackageError, match=r"data not in the package: absent\.bin"):
        Problem(pkg)


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "judge", *args], capture_output=True, text=True, cwd=REPO_ROOT, timeout=300
    )


def test_cli_part_replaces_one_reference(tmp_path: Path) -> None:
    _, user = course(tmp_path)
    solution = tmp_path / "solution.py"
    solution.write_text(USES_PART)
    mine = tmp_path / "double.py"
    mine.write_text("def f(x):\n    return x * 3\n")
    common = ("run", str(user.root), str(solution), "--backend", "local", "--json")
    done = cli(*common, "--part", f"901={mine}")
    report = json.loads(done.stdout)
    assert done.returncode == 1 and report["verdict"] == "WA"
    assert report["parts"] == [{"problem": "901", "module": "course.double", "origin": "file", "used": True}]
    bad = cli(*common, "--part", "901")
    assert bad.returncode == 2 and "--part takes ID=FILE" in bad.stderr
    unknown = cli(*common, "--part", f"204={mine}")
    assert unknown.returncode == 2 and "has no part '204' (its parts: 901 (course.double))" in unknown.stderr


@pytest.mark.docker
@pytest.mark.slow
def test_parts_and_data_travel_inside_the_sandboxed_job(tmp_path: Path, docker_backend: Backend) -> None:
    """In the Docker sandbox, as the site judges: the learner's part and the package's data are
    in the job (the container has neither the problems folder nor the network). One package
    holds both, so the sandbox runs one trusted job and one learner's job."""
    make_package(tmp_path, problem_id="901", slug="double", extra_toml='module = "course.double"')
    pkg = make_package(
        tmp_path,
        problem_id="902",
        slug="plus-one",
        cases=DATA_CASES,
        reference=USES_PART,
        wrong={"plus_two": '"""加了 2 / You added 2."""\ndef f(x):\n    return 2 * x + 2\n'},
        extra_toml='module = "course.plus_one"\nparts = ["901"]\ndata = ["tables"]',
    )
    (pkg / "tables").mkdir()
    (pkg / "tables" / "scale.txt").write_text("3.5\n")
    mine = PartSource("901", "course.double", "def f(x):\n    return x + x\n", "learner")
    report = judge_source(
        Problem(pkg), USES_PART, docker_backend, ExpectedStore(tmp_path / "cache"), parts=[mine]
    )
    assert report.verdict == Verdict.AC and report.backend == "docker", report.to_dict("en")
    assert [(p.origin, p.used) for p in report.parts] == [("learner", True)]
