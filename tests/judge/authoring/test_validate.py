"""`judge validate` on tiny packages: the coverage bar, and what the JSON says about a package."""

from __future__ import annotations

from pathlib import Path

import pytest

from judge.authoring.validate import (
    MIN_HIDDEN,
    MIN_PUBLIC,
    MIN_WRONG,
    Validation,
    validate_package,
)
from judge.settings import JudgeSettings
from tests.factories import PROPERTIES_CASE_F, local_backend, make_package

pytestmark = pytest.mark.slow

# Public and hidden cases enough for the bar, over the default `f(x) = 2x` package.
CASES = (
    "import torch\nfrom judge.core.casekit import case\n\n"
    + "".join(
        f"@case(points={10 if i < 10 else 0}, public={i < MIN_PUBLIC})\n"
        f"def c{i}(impl, rng):\n    return {{'y': impl.f(rng.normal(3, {i + 1}))}}\n\n"
        for i in range(MIN_PUBLIC + MIN_HIDDEN + 2)
    )
    + PROPERTIES_CASE_F
)
WRONG = {
    "times_three": '"""乘了 3 / You multiplied by 3."""\ndef f(x):\n    return x * 3\n',
    "plus_x": '"""加了 1 / You added one."""\ndef f(x):\n    return x * 2 + 1\n',
    "squared": '"""平方了 / You squared it."""\ndef f(x):\n    return x * x\n',
}
ACCEPTED = {"sum": "def f(x):\n    return x + x\n"}


def settings(tmp_path: Path) -> JudgeSettings:
    return JudgeSettings(cache_dir=tmp_path / "cache")


def validate(pkg: Path, tmp_path: Path) -> Validation:
    """The tiny `2x` reference has a handful of mutants; the bar on their number is tested apart."""
    return validate_package(pkg, local_backend(), settings(tmp_path))


def checks(result: object) -> dict[str, dict[str, object]]:
    return {c["name"]: c for c in result.to_dict()["checks"]}  # type: ignore[attr-defined]


def test_a_package_that_clears_the_bar_is_sound(tmp_path: Path) -> None:
    pkg = make_package(tmp_path, cases=CASES, wrong=WRONG, accepted=ACCEPTED)
    result = validate(pkg, tmp_path)
    assert result.ok, result.to_dict()
    assert result.to_dict()["counts"] == {
        "public": MIN_PUBLIC,
        "hidden": MIN_HIDDEN + 3,
        "accepted": 1,
        "wrong": MIN_WRONG,
    }


def test_too_few_cases_and_solutions_say_what_is_missing(tmp_path: Path) -> None:
    # The factory's default: 1 public and 1 hidden case, no accepted alternative, 1 wrong solution.
    pkg = make_package(tmp_path)
    result = validate(pkg, tmp_path)
    coverage = checks(result)["coverage"]
    assert not result.ok and not coverage["ok"]
    detail = str(coverage["detail"])
    for words in ("public cases: 1 < 2", "hidden cases: 1 < 6", "accepted alternatives", "wrong solutions"):
        assert words in detail, detail
    # Everything else about the package is fine but what two lone cases cannot do: call f
    # several times and on a view (properties), which also lets a result cached by shape pass.
    failing = [name for name, c in checks(result).items() if not c["ok"]]
    assert failing == ["coverage", "properties", "mutants"]
    assert "shape-cache" in str(checks(result)["mutants"]["detail"])


def test_a_misspelt_forbidden_api_is_reported_not_ignored(tmp_path: Path) -> None:
    """The runner skips forbidden names a learner's torch lacks (the kit runs on torch 2.1+), so
    validate is where a misspelt name must show up."""
    pkg = make_package(
        tmp_path,
        cases=CASES,
        wrong=WRONG,
        accepted=ACCEPTED,
        forbidden=("torch.nn.functional.no_such_function", "torch.nn.functional.softmax"),
    )
    result = validate(pkg, tmp_path)
    forbidden = checks(result)["forbidden"]
    assert not forbidden["ok"] and "torch.nn.functional.no_such_function" in str(forbidden["detail"])
    assert "softmax" not in str(forbidden["detail"])
    # Everything else runs: the runner skipped the unknown name instead of failing the job.
    assert [name for name, c in checks(result).items() if not c["ok"]] == ["forbidden"]


def test_a_short_reference_is_held_to_its_own_few_mutants(tmp_path: Path) -> None:
    pkg = make_package(tmp_path, cases=CASES, wrong=WRONG, accepted=ACCEPTED)
    result = validate_package(pkg, local_backend(), settings(tmp_path))
    mutants = checks(result)["mutants"]
    assert mutants["ok"], mutants["detail"]  # a two-line reference: every mutant killed is enough
    assert result.to_dict()["mutants"] == {
        "generated": 4,
        "killed": 4,
        "equivalent": 0,
        "survived": 0,
        "survivors": [],
    }
