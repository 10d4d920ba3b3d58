"""The properties of a package's cases (judge.authoring.properties, issue 28): tiny packages with an
nn.Module entry point and a function entry point, built with each property and without it."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

import judge.authoring.validate as validate_module
from judge.authoring.package import PROPERTY_NAMES, PackageError, Problem
from judge.authoring.properties import PropertyReport, PropertyResult, analyse, check, render
from judge.authoring.validate import Validation, _check_properties
from tests.factories import make_package

REFERENCE = """
import torch
from torch import nn


class Scale(nn.Module):
    def __init__(self, dim, bias=False):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.bias = nn.Parameter(torch.zeros(dim)) if bias else None

    def forward(self, x, gain=1.0):
        y = x * self.weight * gain
        return y if self.bias is None else y + self.bias


def f(x, power=1):
    return x**power
"""

HEAD = """
import torch
from judge.core.casekit import case, load_params
"""

# One case per property, each giving that property and none of the others: every input other
# than the batch and length-1 cases' is (1, 3, 4) or (1, 5, 4): batch 1, no size-1 length axis.
PIECES = {
    "arguments": """
@case(points=10)
def every_argument(impl, rng):
    a, b = impl.Scale(4), impl.Scale(6, bias=True)
    x = rng.normal(1, 3, 4)
    return {
        "a": [a(x), a(rng.normal(1, 3, 4), gain=2.0)],
        "b": b(rng.normal(1, 3, 6)),
        "f": [impl.f(x), impl.f(rng.normal(1, 3, 4), power=2)],
    }
""",
    "repeated_calls": """
@case(points=10)
def one_object_many_calls(impl, rng):
    m = impl.Scale(4)
    return {
        "fp32": m(rng.normal(1, 3, 4)),
        "fp64": m(rng.normal(1, 5, 4, dtype=torch.float64), gain=0.5),
    }
""",
    "param_edit": """
@case(points=10)
def edited_weight(impl, rng):
    m = impl.Scale(4)
    x = rng.normal(1, 3, 4)
    before = m(x)
    with torch.no_grad():
        m.weight.add_(1.0)
    return {"before": before, "after": m(x)}
""",
    "non_contiguous": """
@case(points=10)
def transposed(impl, rng):
    return {"y": impl.f(rng.normal(1, 4, 3).transpose(1, 2))}
""",
    "batch": """
@case(points=10)
def batch_of_two(impl, rng):
    return {"y": impl.f(rng.normal(2, 3, 4))}
""",
    "length_one": """
@case(points=10)
def one_token(impl, rng):
    return {"y": impl.f(rng.normal(1, 1, 4))}
""",
    "two_instances": """
@case(points=10)
def two_scales(impl, rng):
    a, b = impl.Scale(4), impl.Scale(4)
    load_params(b, weight=rng.normal(4))
    x = rng.normal(1, 3, 4)
    first = a(x)
    other = b(x)
    return {"first": first, "other": other, "again": a(rng.normal(1, 3, 4))}
""",
}
# A public case that gives nothing: packages need one, and no property may come from it.
PUBLIC = """
@case(points=30, public=True)
def public_forward(impl, rng):
    return {"y": impl.Scale(4)(rng.normal(1, 3, 4))}
"""


def package(
    tmp_path: Path, without: str | None = None, waivers: str = "", pieces: dict[str, str] = PIECES
) -> Path:
    cases = HEAD + PUBLIC + "".join(src for name, src in pieces.items() if name != without)
    pkg = make_package(tmp_path, cases=cases, reference=REFERENCE, points=100)
    toml = pkg / "problem.toml"
    text = toml.read_text().replace('entry_points = ["f"]', 'entry_points = ["Scale", "f"]')
    toml.write_text(text + (f"\n[waivers]\n{waivers}\n" if waivers else ""))
    return pkg


def statuses(report: PropertyReport) -> dict[str, str]:
    return {r.name: r.status for r in report.results}


def result(report: PropertyReport, name: str) -> PropertyResult:
    return next(r for r in report.results if r.name == name)


def test_a_package_with_every_property_meets_them_all(tmp_path: Path) -> None:
    report = check(Problem(package(tmp_path)))
    assert not report.error and not report.case_errors, report
    assert statuses(report) == dict.fromkeys(PROPERTY_NAMES, "met"), render(report, False)
    assert not report.stale


@pytest.mark.parametrize("name", [n for n in PROPERTY_NAMES if n != "arguments"])
def test_a_package_without_one_property_is_reported_with_that_gap(tmp_path: Path, name: str) -> None:
    report = check(Problem(package(tmp_path, without=name)))
    gaps = [r.name for r in report.gaps()]
    # Leaving a case out also leaves some arguments unvaried; no other property moves.
    assert name in gaps and set(gaps) <= {name, "arguments"}, render(report, False)


def test_arguments_never_varied_are_named(tmp_path: Path) -> None:
    report = check(Problem(package(tmp_path, without="arguments")))
    gaps = result(report, "arguments").gaps
    # bias and power are only ever left at their defaults; dim differs only between objects of
    # different cases, and f's x only between calls in different cases.
    assert "never takes a non-default value in a hidden case (always False)" in gaps["Scale.bias"]
    assert "never takes a non-default value in a hidden case (always 1)" in gaps["f.power"]
    assert gaps["Scale.dim"] == "never differs between two objects one case makes"
    assert gaps["f.x"] == "never changes between two calls of one object in a case"
    # gain is given in one_object_many_calls (hidden) and changes there: not a gap.
    assert "Scale.forward.gain" not in gaps and "Scale.forward.x" not in gaps
    assert "Scale.bias" in render(report, False)


def test_a_value_passed_only_in_a_public_case_does_not_count(tmp_path: Path) -> None:
    public = PIECES["arguments"].replace("@case(points=10)", "@case(points=10, public=True)")
    report = check(Problem(package(tmp_path, pieces={**PIECES, "arguments": public})))
    gaps = result(report, "arguments").gaps
    assert set(gaps) == {"Scale.bias", "f.power"}, gaps


def test_unobserved_calls_and_edits_before_the_first_call_do_not_count(tmp_path: Path) -> None:
    pieces = {
        **PIECES,
        # The fp64 call is made but not observed.
        "repeated_calls": PIECES["repeated_calls"]
        .replace('"fp64": m(', '"fp32_again": m(rng.normal(1, 3, 4)), "unused": str(m(')
        .replace("gain=0.5),", "gain=0.5).shape),"),
        # load_params before the first call is setting up, not an edit after it.
        "param_edit": """
@case(points=10)
def loaded_then_called(impl, rng):
    m = impl.Scale(4)
    load_params(m, weight=rng.normal(4))
    return {"y": m(rng.normal(1, 3, 4))}
""",
    }
    report = check(Problem(package(tmp_path, pieces=pieces)))
    repeated = result(report, "repeated_calls")
    assert repeated.status == "gap" and "1 of its outputs are not observed" in repeated.detail, repeated
    assert result(report, "param_edit").status == "gap"


def test_an_argument_given_only_later_is_no_new_dtype(tmp_path: Path) -> None:
    """The dtypes must change for one argument: a float64 gain that only the second call passes
    leaves x's dtype as it was."""
    second = "m(rng.normal(1, 5, 4), gain=torch.tensor(0.5, dtype=torch.float64))"
    pieces = {
        **PIECES,
        "repeated_calls": PIECES["repeated_calls"].replace(
            "m(rng.normal(1, 5, 4, dtype=torch.float64), gain=0.5)", second
        ),
    }
    repeated = result(check(Problem(package(tmp_path, pieces=pieces))), "repeated_calls")
    assert repeated.status == "gap" and "but the dtypes do not change" in repeated.detail, repeated


def test_records_say_what_each_call_was(tmp_path: Path) -> None:
    records = analyse(Problem(package(tmp_path)))
    assert set(records.signatures) == {"Scale", "Scale.forward", "f"}
    assert [p.name for p in records.signatures["Scale.forward"].params] == ["x", "gain"]
    case = next(c for c in records.cases if c.name == "edited_weight")
    made, before, after = case.calls
    assert made.callable == "Scale" and before.callable == after.callable == "Scale.forward"
    assert after.edited == ("weight",) and before.edited == () and after.observed and before.observed
    assert before.tensors[0].shape == (1, 3, 4) and before.tensors[0].contiguous
    transposed = next(c for c in records.cases if c.name == "transposed").calls[0]
    assert not transposed.tensors[0].contiguous and transposed.tensors[0].stride == (12, 1, 3)
    gain = next(a for a in case.calls[1].args or () if a.name == "gain")
    assert gain.default and not gain.explicit


def test_a_waiver_with_a_reason_silences_the_gap_and_is_shown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reason = "the statement takes sequences of two tokens or more"
    problem = Problem(package(tmp_path, without="length_one", waivers=f'length_one = "{reason}"'))
    report = check(problem)
    assert result(report, "length_one").status == "waived" and not report.gaps() and not report.stale
    assert result(report, "length_one").waived == {"length_one": reason}
    monkeypatch.setattr(validate_module, "ENFORCE_PROPERTIES", True)
    v = Validation(str(problem.root))
    _check_properties(v, problem)
    [c] = v.checks
    assert c.name == "properties" and c.ok, c.detail
    assert f"~ length_one: waived (length_one: {reason})" in c.detail
    assert v.to_dict()["properties"]["properties"]["length_one"]["waived"] == {"length_one": reason}


def test_a_module_converted_between_calls_changes_the_dtype(tmp_path: Path) -> None:
    """A model whose only input is token ids changes dtype with `.to(...)`: that counts, and a
    conversion that keeps the dtype (a `.to()` to the same one) does not."""
    converted = PIECES["repeated_calls"].replace(
        '"fp64": m(rng.normal(1, 5, 4, dtype=torch.float64), gain=0.5)',
        '"fp64": m.to(torch.float64)(rng.normal(1, 5, 4).double(), gain=0.5)',
    )
    converted = converted.replace("rng.normal(1, 5, 4).double()", "rng.normal(1, 5, 4)")
    report = check(Problem(package(tmp_path / "a", pieces={**PIECES, "repeated_calls": converted})))
    assert result(report, "repeated_calls").status == "met", render(report, True)
    same = converted.replace("m.to(torch.float64)", "m.to(torch.float32)")
    report = check(Problem(package(tmp_path / "b", pieces={**PIECES, "repeated_calls": same})))
    assert result(report, "repeated_calls").status == "gap"
    assert "the dtypes do not change" in result(report, "repeated_calls").detail


def test_one_argument_may_be_waived(tmp_path: Path) -> None:
    pieces = {**PIECES, "arguments": PIECES["arguments"].replace("impl.Scale(6, bias=True)", "impl.Scale(6)")}
    waived = check(
        Problem(package(tmp_path, pieces=pieces, waivers='"arguments:Scale.bias" = "bias is tested in 999"'))
    )
    assert result(waived, "arguments").status == "waived" and not waived.gaps()


def test_a_gap_fails_validation_and_is_a_warning_only_when_not_enforced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    problem = Problem(package(tmp_path, without="two_instances"))
    assert validate_module.ENFORCE_PROPERTIES is True  # every shipped package carries the cases
    enforced = Validation(str(problem.root))
    _check_properties(enforced, problem)
    assert not enforced.ok and "✗ two_instances" in enforced.checks[0].detail
    assert enforced.to_dict()["properties"]["gaps"] == ["two_instances"]
    monkeypatch.setattr(validate_module, "ENFORCE_PROPERTIES", False)
    warned = Validation(str(problem.root))
    _check_properties(warned, problem)
    assert warned.checks[0].ok and "! two_instances: no case makes two objects" in warned.checks[0].detail
    assert "not enforced yet" in warned.checks[0].detail.splitlines()[0]


def test_a_waiver_that_waives_nothing_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    problem = Problem(package(tmp_path, waivers='batch = "batches are another problem\'s business"'))
    report = check(problem)
    assert report.stale == ["batch"] and result(report, "batch").status == "met"
    monkeypatch.setattr(validate_module, "ENFORCE_PROPERTIES", True)
    v = Validation(str(problem.root))
    _check_properties(v, problem)
    assert not v.ok and "waiver of batch waives nothing" in v.checks[0].detail


@pytest.mark.parametrize(
    ("waivers", "words"),
    [
        ('length_one = ""', "at least 10 characters"),
        ('length_one = "   "', "at least 10 characters"),
        ("length_one = true", "valid string"),
        ('length_one = "TODO: say why"', "still TODO"),
        ('no_such_property = "a perfectly good reason"', "waives no known property"),
        ('"arguments:Scale" = "a perfectly good reason"', "waives no known property"),
    ],
)
def test_a_waiver_without_a_reason_is_refused_by_the_schema(tmp_path: Path, waivers: str, words: str) -> None:
    with pytest.raises(PackageError) as err:
        Problem(package(tmp_path, waivers=waivers))
    assert "waivers" in str(err.value) and words in str(err.value), err.value


def test_function_only_packages_and_defaults_apply_sensibly(tmp_path: Path) -> None:
    """The factory's default package: `f(x)` alone, called once per case."""
    report = check(Problem(make_package(tmp_path)))
    assert statuses(report) == {
        "arguments": "gap",
        "repeated_calls": "gap",
        "param_edit": "n/a",
        "non_contiguous": "gap",
        "batch": "met",
        "length_one": "gap",
        "two_instances": "n/a",
    }, render(report, False)


@pytest.mark.slow
def test_validate_reports_the_properties_per_package(tmp_path: Path) -> None:
    """`judge validate` runs the check after the reference passes, and --json carries it."""
    from judge.authoring.validate import validate_package
    from judge.settings import JudgeSettings
    from tests.factories import local_backend

    pkg = package(tmp_path, without="two_instances", waivers='length_one = "not waived for a reason"')
    v = validate_package(pkg, local_backend(), JudgeSettings(cache_dir=tmp_path / "cache"))
    checks = {c.name: c for c in v.checks}
    assert checks["reference"].ok and not checks["properties"].ok, checks["properties"].detail
    detail = checks["properties"].detail
    assert "✗ two_instances" in detail and "✗ waiver of length_one waives nothing" in detail
    out = v.to_dict()["properties"]
    assert (
        out["enforced"] is True
        and out["gaps"] == ["two_instances"]
        and out["stale_waivers"] == ["length_one"]
    )
    assert out["properties"]["batch"]["status"] == "met" and out["properties"]["batch"]["description"]


def test_the_admin_page_shows_the_properties_and_their_waivers() -> None:
    from babel.support import NullTranslations

    from web.pages.templating import environment

    reason = "inputs are two tokens or more by the statement"
    report = PropertyReport(
        results=[
            PropertyResult(
                "length_one", "waived", "no case passes a length-1 input", {}, {"length_one": reason}
            ),
            PropertyResult("batch", "gap", "no case passes a batch > 1"),
        ]
    )
    checks = [{"name": "properties", "ok": True, "detail": render(report, False)}]
    validation = SimpleNamespace(status="sound", finished_at=None, checks=checks, failed=[], error="")
    problem = SimpleNamespace(id="901", title_zh="题", title_en="T", version="0" * 16, validation=validation)
    translations = NullTranslations()
    html = (
        environment()
        .get_template("admin.html")
        .render(
            _=translations.gettext,
            gettext=translations.gettext,
            ngettext=translations.ngettext,
            lang="en",
            problems=[problem],
            users=[],
            counts={},
            submissions=[],
            user=SimpleNamespace(id=1, username="admin", role="admin", language="en"),
            request=SimpleNamespace(url=SimpleNamespace(path="/admin", query="")),
            csrf_token="",
            other_languages=[],
            js_messages={},
            assets=SimpleNamespace(script=None, style=None),
            current_path="/admin",
        )
    )
    assert 'data-testid="properties"' in html
    assert f"~ length_one: waived (length_one: {reason})" in html
    assert "! batch: no case passes a batch &gt; 1" in html
