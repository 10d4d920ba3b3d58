"""The checks of `judge validate` write their findings to a sink: an error fails the package, a
warning or a note does not, and a check that others depend on says whether they can run."""

from __future__ import annotations

from pathlib import Path

from judge.authoring.mutation.run import MutationScore
from judge.authoring.package import Lowered, ValidationSpec
from judge.authoring.validate import Validation
from judge.authoring.validation.diagnostics import Diagnostics
from judge.authoring.validation.files import check_coverage, load_package
from judge.authoring.validation.mutants import check_mutants
from tests.factories import make_package


def test_only_an_error_fails_and_each_finding_keeps_its_check_and_order() -> None:
    out = Diagnostics()
    assert not out.ok  # nothing checked proves nothing
    out.note("cases", "20 cases")
    out.warning("properties", "a gap, not enforced yet")
    assert out.ok
    assert out.outcome("reference", True, "passes") is True
    assert out.outcome("wrong/x", False, "passes every case") is False
    assert not out.ok
    assert [(c.name, c.level, c.ok) for c in out.checks] == [
        ("cases", "note", True),
        ("properties", "warning", True),
        ("reference", "note", True),
        ("wrong/x", "error", False),
    ]


def test_the_json_keeps_name_ok_and_detail_and_adds_the_level() -> None:
    v = Validation("pkg")
    v.diagnostics.warning("mutants", "sound\nunspecific hint")
    assert v.ok and v.checks == v.diagnostics.checks
    [check] = v.to_dict()["checks"]
    assert list(check) == ["name", "ok", "detail", "level"]
    assert check == {"name": "mutants", "ok": True, "detail": "sound\nunspecific hint", "level": "warning"}


def test_a_package_whose_cases_do_not_load_stops_at_the_cases(tmp_path: Path) -> None:
    pkg = make_package(tmp_path, cases="raise RuntimeError('broken on purpose')\n")
    out = Diagnostics()
    assert load_package(out, pkg) is None
    assert [(c.name, c.level) for c in out.checks] == [("problem.toml", "note"), ("cases", "error")]
    assert out.checks[0].detail == "valid (id 901)"


def test_a_package_that_does_not_load_says_why_under_problem_toml(tmp_path: Path) -> None:
    out = Diagnostics()
    assert load_package(out, tmp_path / "missing") is None
    [check] = out.checks
    assert check.name == "problem.toml" and not check.ok and "not a problem package folder" in check.detail


def test_coverage_below_the_bar_is_an_error_that_names_what_is_short() -> None:
    out = Diagnostics()
    check_coverage(out, {"public": 2, "hidden": 1, "accepted": 1, "wrong": 3}, ValidationSpec())
    [check] = out.checks
    assert check.level == "error" and check.detail.endswith("; too few hidden cases: 1 < 6")


def test_a_package_lowers_a_bar_with_its_reason_between_the_floor_and_the_default() -> None:
    lowered = ValidationSpec(
        min_hidden=Lowered(value=1, reason="one line of arithmetic: one hidden case checks it all"),
        min_wrong=Lowered(value=1, reason="there is one way to get it wrong and it is listed"),
    )
    out = Diagnostics()
    check_coverage(out, {"public": 2, "hidden": 1, "accepted": 1, "wrong": 1}, lowered)
    [check] = out.checks
    assert check.ok and "hidden cases 1 (default 6): one line of arithmetic" in check.detail
    # Above the default lowers nothing; below the floor checks nothing: both refused.
    for bad, said in (
        (ValidationSpec(min_wrong=Lowered(value=4, reason="more is better, surely")), "may only lower it"),
        (ValidationSpec(min_hidden=Lowered(value=0, reason="the public cases do")), "below the floor of 1"),
    ):
        out = Diagnostics()
        check_coverage(out, {"public": 2, "hidden": 6, "accepted": 1, "wrong": 4}, bad)
        assert not out.checks[0].ok and said in out.checks[0].detail, out.checks[0].detail


def test_a_reference_with_nothing_to_mutate_is_an_error() -> None:
    none = MutationScore([], {})
    out = Diagnostics()
    check_mutants(out, none)
    assert [c.level for c in out.checks] == ["error"]
    assert "no mutants" in out.checks[0].detail
