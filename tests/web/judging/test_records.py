"""web.judging.records: the stored report and the scratch result as versioned records, checked
when written and when read back, rows of before upgraded as they are read."""

from __future__ import annotations

from typing import Any

import pytest

from judge.core.diagnose.probe import Diagnosis
from judge.core.report import CaseResult, PartUse, Report
from judge.core.texts import Text, same
from judge.core.verdicts import Verdict
from web.judging.records import (
    HIDDEN_CASE_FIELDS,
    REPORT_VERSION,
    StoredCase,
    StoredReport,
    StoredScratch,
    StoredText,
    UnreadableRecord,
    read_report,
    read_result,
    read_scratch,
    stored_report,
    system_error,
)

TRACEBACK = 'Traceback (most recent call last):\n  File "solution.py", line 7, in f\nValueError: no'


def a_report() -> Report:
    """A report as the judge makes it now: every kind of field filled in."""
    failing = CaseResult(
        "broken",
        True,
        Verdict.WA,
        0,
        40,
        3.5,
        message=Text("形状不对", "wrong shape"),
        hint=Text("提示", "a hint"),
        description=Text("描述", "a description"),
        diagnoses=[Diagnosis("scaled", 0.8, Text("放大了", "scaled up"))],
        error_map={"rows": 1, "cols": 2, "cells": [[0.5, "nan"]], "path": "y"},
    )
    fine = CaseResult("fine", False, Verdict.AC, 60, 60, 1.25)
    return Report(
        "204",
        Verdict.WA,
        60,
        100,
        "local",
        4.75,
        [failing, fine],
        elapsed_ms=812.0,
        log="printed\n",
        warnings=[Text("没有沙箱", "no sandbox")],
        parts=[PartUse("203", "qwen.norm", "learner", True)],
    )


def test_what_the_judge_reports_is_a_stored_report() -> None:
    made = a_report().to_dict()
    stored = stored_report(made)
    assert stored.version == REPORT_VERSION and stored.verdict == Verdict.WA and stored.score == 60
    assert stored.warnings == [StoredText(zh="没有沙箱", en="no sandbox")]
    assert stored.cases[0].message.en == "wrong shape" and stored.cases[0].diagnoses[0].label is not None
    assert stored.cases[0].error_map == made["cases"][0]["error_map"]
    assert stored.parts[0].origin == "learner" and stored.log_scope == "public"
    # Every field the judge writes has its place in the record: none is dropped on the way in.
    assert set(made) <= set(StoredReport.model_fields)
    assert set(made["cases"][0]) <= set(StoredCase.model_fields)


def test_a_stored_report_reads_back_as_written() -> None:
    stored = stored_report(a_report().to_dict())
    row = stored.model_dump(mode="json")  # what the worker writes into the column
    assert row["version"] == REPORT_VERSION
    assert read_report(row) == stored
    assert read_report(read_report(row).model_dump(mode="json")) == stored


def test_a_report_stored_before_it_had_a_version_reads_back_right() -> None:
    """A row as the judge wrote it before (issue 30): no version, no log scope, a warning with
    both languages in one string, texts as one string or apart, and where the error is and
    which problem to solve first only inside the messages."""
    old: dict[str, Any] = {
        "problem": "209",
        "verdict": "CE",
        "score": 0,
        "max_score": 100,
        "backend": "docker",
        "time_ms": 0.0,
        "elapsed_ms": 512.0,
        "log": "",
        "warnings": ["本地后端不是安全沙箱。\nThe local backend is no security boundary."],
        "parts": [{"problem": "204", "module": "qwen.norm", "origin": "missing", "used": False}],
        "cases": [
            {
                "name": "syntax",
                "public": True,
                "verdict": "CE",
                "score": 0,
                "max_score": 50,
                "time_ms": 0.0,
                "ran": False,
                "message": "  File \"solution.py\", line 3\n    def f(x)\nSyntaxError: expected ':'",
                "hint": "",
                "description": {"zh": "语法", "en": "syntax"},
                "diagnoses": [{"kind": "shifted", "strength": 0.5, "message": "shifted by one"}],
            },
            {
                "name": "part",
                "public": True,
                "verdict": "CE",
                "score": 0,
                "max_score": 25,
                "time_ms": 0.0,
                "message": {
                    "zh": "这道题用到第 204 题的零件 qwen.norm，你还没有通过第 204 题："
                    "先去做它（/problems/204）",
                    "en": "this problem uses part qwen.norm from problem 204, which you have not "
                    "solved yet: solve it first (/problems/204)",
                },
            },
            {
                "name": "in_a_part",
                "public": False,
                "verdict": "RE",
                "score": 0,
                "max_score": 25,
                "time_ms": 1.0,
                "message": TRACEBACK.replace("solution.py", "qwen/norm.py"),
                "hint": None,
            },
        ],
    }
    report = read_report(old)
    assert report.version == REPORT_VERSION and report.log_scope is None  # its log may echo hidden inputs
    assert report.warnings == [
        StoredText(zh="本地后端不是安全沙箱。", en="The local backend is no security boundary.")
    ]
    syntax, part, in_a_part = report.cases
    assert syntax.line == 3 and syntax.missing_problem is None and not syntax.ran
    assert syntax.message.zh == syntax.message.en and "SyntaxError" in syntax.message.en
    assert syntax.description == StoredText(zh="语法", en="syntax") and syntax.hint == StoredText()
    assert syntax.diagnoses[0].message.en == "shifted by one" and syntax.diagnoses[0].label is None
    assert part.missing_problem == "204" and part.line is None
    assert "/problems/204" in part.message.en  # the text stays as it was
    assert in_a_part.line is None  # a frame in one of their parts: another file than the editor's
    assert report.parts[0].origin == "missing"
    # Once read it is a version 2 record, and reads back the same.
    assert read_report(report.model_dump(mode="json")) == report


def test_a_traceback_of_before_gives_its_innermost_line() -> None:
    case = {"name": "c", "public": True, "verdict": "RE", "score": 0, "max_score": 1, "message": TRACEBACK}
    old = {"problem": "204", "verdict": "RE", "score": 0, "max_score": 1, "cases": [case]}
    assert read_report(old).cases[0].line == 7
    accepted = {**old, "cases": [{**case, "verdict": "AC"}]}
    assert read_report(accepted).cases[0].line is None  # only an error points at a line


@pytest.mark.parametrize(
    ("row", "says"),
    [
        ({"problem": "204", "verdict": "AC", "score": 1, "max_score": 1, "cases": "all"}, "cases"),
        ({"problem": "204", "verdict": "AC", "score": "many", "max_score": 1}, "score"),
        ({"problem": "204", "verdict": "OK", "score": 1, "max_score": 1}, "verdict"),
        ({"version": 3, "problem": "204", "verdict": "AC", "score": 1, "max_score": 1}, "version"),
        ({"version": 2, "verdict": "AC", "score": 1, "max_score": 1}, "problem"),
        ({"kind": "poem", "verdict": "AC"}, "poem"),
        ("AC", "report"),
    ],
)
def test_a_malformed_row_is_a_clear_error(row: Any, says: str) -> None:
    with pytest.raises(UnreadableRecord, match=says):
        read_result(row)


def test_a_report_is_not_a_scratch_result_nor_the_other_way_round() -> None:
    report = stored_report(a_report().to_dict()).model_dump(mode="json")
    with pytest.raises(UnreadableRecord, match="scratch run's result was expected"):
        read_scratch(report)
    scratch = {"kind": "scratch", "verdict": "AC", "status": "ok"}
    with pytest.raises(UnreadableRecord, match="a report was expected"):
        read_report(scratch)


def test_a_scratch_result_reads_back_as_written() -> None:
    made = {
        "kind": "scratch",
        "verdict": "AC",
        "score": 0,
        "max_score": 0,
        "status": "ok",
        "message": "",
        "text": None,
        "line": None,
        "log": "hi\n",
        "value": {"repr": "tensor([1.])", "type": "Tensor", "shape": [1], "dtype": "float32"},
        "calls": [
            {
                "call": "f(float32[1])",
                "learner": "tensor([2.])",
                "reference": "tensor([2.])",
                "match": True,
                "difference": 0.0,
                "detail": {"zh": "一致", "en": "matches"},
                "reason": None,
            }
        ],
        "note": None,
        "skipped": 0,
        "time_ms": 1.5,
        "elapsed_ms": 90.0,
        "replayed": 1,
    }
    stored = read_scratch(made)
    assert isinstance(stored, StoredScratch) and stored.replayed == 1 and stored.calls[0].match is True
    assert set(made) <= set(StoredScratch.model_fields)
    assert read_scratch(stored.model_dump(mode="json")) == stored


def test_a_scratch_result_of_before_counts_the_reference_answers() -> None:
    """Before the reveal budget kept its count, the calls that show a reference value were it."""
    calls = [{"call": "f()", "learner": "1", "reference": "1"}, {"call": "g()", "learner": "2"}]
    old = {"kind": "scratch", "verdict": "WA", "status": "ok", "calls": calls, "note": "one string"}
    stored = read_scratch(old)
    assert stored.replayed == 1 and stored.note == StoredText(zh="one string", en="one string")


def test_a_system_error_takes_the_kind_of_its_job() -> None:
    why = Text("评测失败", "judging failed")
    report = system_error("204", why, scratch=False)
    assert isinstance(report, StoredReport) and report.verdict == Verdict.SE
    assert report.warnings == [StoredText.of(why)]
    scratch = system_error("204", why, scratch=True)
    assert (
        isinstance(scratch, StoredScratch)
        and scratch.status == "stopped"
        and scratch.text == StoredText.of(why)
    )
    # A scratch run the judge failed on used to be stored as the judge's report: it reads as one.
    old = Report.system_error("204", same("judging failed 3 times")).to_dict()
    assert read_scratch(old).text == StoredText(zh="judging failed 3 times", en="judging failed 3 times")


def test_what_a_hidden_case_shows_as_stored_is_marked_on_the_record() -> None:
    assert HIDDEN_CASE_FIELDS == ("name", "public", "verdict", "score", "max_score", "ran")
