"""The scratch cell's snippets as the author declares them (problem.toml's `[scratch]`): the
schema, the validation check that runs them against the reference, and the course's packages,
each of which carries its own example."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from judge.authoring.package import PackageError, Problem, all_problem_dirs, parse_spec
from judge.authoring.validation.diagnostics import Diagnostics
from judge.authoring.validation.scratch import check_scratch, snippet_problem
from judge.core.runner.scratch import MAX_SNIPPET
from judge.core.verdicts import Verdict
from judge.expected import ExpectedStore
from judge.scratch import Scratch
from tests.factories import local_backend, make_package
from tests.paths import REPO_ROOT

HEAD = textwrap.dedent("""\
    id = "901"
    slug = "double"
    version = 1
    difficulty = "easy"
    chapter = "tests"
    entry_points = ["f"]
    points = 100

    [title]
    zh = "加倍"
    en = "Double"
    """)

# Two public cases and a hidden one.
CASES = """import torch
from judge.core.casekit import case

@case(points=40, public=True)
def small(impl, rng):
    return {"y": impl.f(rng.normal(4, 8))}

@case(points=30, public=True)
def row(impl, rng):
    return {"y": impl.f(rng.normal(8))}

@case(points=30)
def secret(impl, rng):
    return {"y": impl.f(rng.normal(3, 3))}
"""


def spec_with(tmp_path: Path, scratch: str) -> Path:
    path = tmp_path / "problem.toml"
    path.write_text(HEAD + scratch)
    return path


def test_the_example_and_the_public_cases_calls_are_read(tmp_path: Path) -> None:
    table = "[scratch]\nexample = '''\nf(torch.ones(2))\n'''\n"
    spec = parse_spec(spec_with(tmp_path, table + "[scratch.cases]\nsmall = 'f(torch.ones(4, 8))'\n"))
    assert spec.scratch is not None
    assert spec.scratch.example == "f(torch.ones(2))\n"
    assert spec.scratch.cases == {"small": "f(torch.ones(4, 8))"}
    assert parse_spec(spec_with(tmp_path, "")).scratch is None  # optional: validation warns


@pytest.mark.parametrize(
    ("scratch", "words"),
    [
        ("[scratch]\nexample = '''\n   \n'''\n", "a snippet must hold code"),
        ("[scratch]\n[scratch.cases]\nsmall = 'f(x)'\n", "scratch.example: Field required"),
        ("[scratch]\nexample = 'f(x)'\nexampel = 'f(y)'\n", "scratch.exampel: Extra inputs"),
        ("[scratch]\nexample = 'f(x)'\n[scratch.cases]\n'not a name' = 'f(x)'\n", "scratch.cases"),
        ("[scratch]\nexample = 'f(x)'\n[scratch.cases]\nsmall = ''\n", "scratch.cases.small"),
        (f"[scratch]\nexample = '{'x' * (MAX_SNIPPET + 1)}'\n", "at most 8000 characters"),
    ],
)
def test_a_malformed_scratch_table_is_named(tmp_path: Path, scratch: str, words: str) -> None:
    with pytest.raises(PackageError) as err:
        parse_spec(spec_with(tmp_path, scratch))
    assert words in str(err.value)


def test_every_package_of_the_course_carries_its_own_example() -> None:
    """Item 1 of issue 31: one generic snippet failed on 12 of 16 problems."""
    dirs = all_problem_dirs(REPO_ROOT / "problems")
    assert len(dirs) >= 16
    for path in dirs:
        problem = Problem(path)
        assert problem.spec.scratch is not None, path.name
        public = {c.name for c in problem.select_cases("public")}
        assert set(problem.spec.scratch.cases) <= public, path.name


def test_what_is_wrong_with_a_run_is_said_in_words() -> None:
    raised = Scratch(Verdict.RE, "error", message="Traceback (your code only):\nNameError: x", line=3)
    assert snippet_problem(raised) == "raises (line 3):\nTraceback (your code only):\nNameError: x"
    assert (
        snippet_problem(Scratch(Verdict.CE, "load", message="SyntaxError")) == "does not load:\nSyntaxError"
    )
    stopped = Scratch(Verdict.TLE, "stopped", text={"zh": "超时", "en": "time limit exceeded"})
    assert snippet_problem(stopped) == "raises:\ntime limit exceeded"
    ok = Scratch(Verdict.AC, "ok", calls=[{"call": "f(float32[2])", "match": True}])
    assert snippet_problem(ok) is None
    differs = Scratch(Verdict.AC, "ok", calls=[{"call": "f(float32[2])", "match": False}])
    assert "differs from itself on f(float32[2])" in (snippet_problem(differs) or "")


@pytest.mark.slow
def test_validation_runs_each_snippet_and_fails_one_that_raises(tmp_path: Path) -> None:
    backend = local_backend()
    store = ExpectedStore(tmp_path / "cache")

    def check(scratch: str) -> Diagnostics:
        root = tmp_path / str(len(list(tmp_path.iterdir())))
        problem = Problem(make_package(root, cases=CASES, extra_toml=scratch))
        out = Diagnostics()
        check_scratch(out, problem, problem.cases, backend, store.get(problem, backend), 30.0)
        return out

    good = check(
        "[scratch]\nexample = 'print(f(torch.ones(2, 3)))'\n[scratch.cases]\nrow = 'f(torch.ones(8))'\n"
    )
    assert good.ok and "2 snippet(s)" in good.checks[-1].detail, good.checks

    bad = check(
        "[scratch]\nexample = 'f(torch.ones(2))'\n[scratch.cases]\nsmall = 'f(torch.ones(4, 8)) @ g'\n"
    )
    (failed,) = [c for c in bad.checks if not c.ok]
    assert failed.name == "scratch"
    assert failed.detail.startswith("[scratch] cases.small: raises (line 1):")
    assert "NameError: name 'g' is not defined" in failed.detail

    # A hidden case's call would show its inputs to every learner; a name of no case is a typo.
    named = check(
        "[scratch]\nexample = 'f(torch.ones(2))'\n[scratch.cases]\nsecret = 'f(x)'\nsmal = 'f(x)'\n"
    )
    details = [c.detail for c in named.checks if not c.ok]
    assert "[scratch.cases] names hidden cases: secret (only public cases)" in details
    assert "[scratch.cases] names no case of cases.py: smal" in details

    missing = check("")
    assert (
        missing.ok
        and missing.checks[0].level == "warning"
        and "no [scratch] example" in missing.checks[0].detail
    )
