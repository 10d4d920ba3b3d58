"""Issue 31 item 3: a failing public case carries what it drew and expected against got at the
first differing positions; a hidden case never carries either (report, stored record, API)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from judge.authoring.package import Problem
from judge.core.casekit import Case
from judge.core.checkers import allclose
from judge.core.compare import compare
from judge.core.compared import compared
from judge.core.frames import CaseOutcome
from judge.core.grading import judge_source
from judge.core.runner.inputs import InputLog
from judge.expected import ExpectedStore
from tests.factories import local_backend, make_package

CASES = '''
import torch
from judge.core.casekit import case


@case(points=50, public=True)
def small(impl, rng):
    """a small public case"""
    x = rng.normal(2, 3)
    return {"y": impl.f(x)}


@case(points=50)
def secret(impl, rng):
    """a hidden case"""
    x = rng.normal(2, 3) + 8675.309
    return {"y": impl.f(x)}
'''
WRONG = "def f(x):\n    return x * 2 + 1\n"


def test_names_come_from_the_cases_source() -> None:
    lines = [
        "x = rng.normal(2, 3)",
        "load_params(norm, weight=rng.normal(4))",
        "xb, gb = rng.normal(2), rng.normal(3)",
        "y.backward(rng.normal(3))",
        "foo([rng.normal(2)])",
    ]
    log = InputLog(lines)
    for line, draws in ((1, 1), (2, 1), (3, 2), (4, 1), (5, 1)):
        for _ in range(draws):
            log.record(torch.zeros(2), line)
    log.record(torch.zeros(40), 1)
    names = [d["name"] for d in log.draws]
    assert names == ["x", "weight", "xb", "gb", "y.backward(…)", "#6", "#7"]
    assert log.draws[0]["values"] == [0.0, 0.0]
    assert "values" not in log.draws[-1]  # 40 elements: shape and dtype only


def test_a_forged_inputs_field_is_dropped_entry_by_entry() -> None:
    good = {"name": "x", "shape": [2], "dtype": "float32", "values": [1.0, "nan"]}
    head = {
        "status": "ok",
        "time_ms": 1.0,
        "obs": None,
        "inputs": [good, {"name": "\x00", "shape": [1], "dtype": "int64"}, "junk", {"name": "z"}],
    }
    assert CaseOutcome.parse(head).inputs == (good,)
    assert CaseOutcome.parse({"status": "ok", "inputs": "no"}).inputs == ()


def test_first_positions_that_differ() -> None:
    case = Case("c", lambda impl, rng: None, 1, True, allclose())
    expected = {"y": torch.tensor([[1.0, 2.0], [3.0, 4.0]])}
    got = {"y": torch.tensor([[1.0, 2.5], [3.0, 5.0]])}
    shown = compared(case, expected, got, compare(case, expected, got))
    assert shown[0]["path"] == "y"
    assert shown[0]["positions"] == [
        {"index": [0, 1], "expected": 2.0, "got": 2.5},
        {"index": [1, 1], "expected": 4.0, "got": 5.0},
    ]


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict:
    problem = Problem(make_package(tmp_path_factory.mktemp("pkg"), cases=CASES))
    store = ExpectedStore(Path(tmp_path_factory.mktemp("cache")))
    return judge_source(problem, WRONG, local_backend(), store, "all").to_dict()


def test_a_failing_public_case_shows_its_inputs_and_values(report: dict) -> None:
    public = next(c for c in report["cases"] if c["name"] == "small")
    assert public["verdict"] == "WA"
    assert [i["name"] for i in public["inputs"]] == ["x"]
    assert public["inputs"][0]["shape"] == [2, 3] and len(public["inputs"][0]["values"]) == 6
    positions = public["compared"][0]["positions"]
    assert positions and positions[0]["index"] == [0, 0]


def test_a_hidden_case_never_carries_them(report: dict) -> None:
    hidden = next(c for c in report["cases"] if c["name"] == "secret")
    assert hidden["verdict"] == "WA"
    assert "inputs" not in hidden and "compared" not in hidden
    assert "8675" not in json.dumps(hidden)


def test_the_stored_record_and_the_learners_view_withhold_them(report: dict) -> None:
    from web.judging.records import read_report, stored_report
    from web.submissions.views import visible_cases

    stored = read_report(stored_report(report).model_dump(mode="json"))
    for full in (False, True):
        shown = {c.name: c for c in visible_cases(stored, full)}
        assert shown["small"].inputs and shown["small"].compared
        assert shown["secret"].inputs is None and shown["secret"].compared is None
    # Even a record forged to hold them on a hidden case is not shown.
    forged = report | {"cases": [c | {"inputs": [{"name": "x"}], "compared": [{}]} for c in report["cases"]]}
    shown = {
        c.name: c for c in visible_cases(read_report(stored_report(forged).model_dump(mode="json")), True)
    }
    assert shown["secret"].inputs is None and shown["secret"].compared is None
