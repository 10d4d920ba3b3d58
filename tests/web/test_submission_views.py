"""web.submissions.views: what a learner reads of a stored report, old and new."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import pytest
from sqlalchemy import select

from tests.web.factories import bearer, make_client, make_settings, platform_of, register
from web.app import create_app
from web.auth.models import User
from web.db import utcnow
from web.platform import Platform
from web.submissions.models import Mode, Submission, SubmissionStatus
from web.submissions.views import detail


def _case(name: str, public: bool, time_ms: float, **more: Any) -> dict[str, Any]:
    return {
        "name": name,
        "public": public,
        "verdict": "AC",
        "score": 1,
        "max_score": 1,
        "time_ms": time_ms,
        "ran": True,
        "message": None,
        **more,
    }


def _report(**fields: Any) -> dict[str, Any]:
    """A report as the judge stored it before reports had a version (fields of the test's own)."""
    return {"problem": "204", "verdict": "AC", "score": 1, "max_score": 2, **fields}


def _submission(report: dict[str, Any]) -> Submission:
    sub = Submission(
        id=1,
        user_id=1,
        problem_id="204",
        mode=Mode.SUBMIT,
        code="x = 1\n",
        report=report,
        created_at=utcnow(),
    )
    sub.status, sub.verdict = SubmissionStatus.DONE, "AC"
    return sub


def test_a_learner_reads_the_public_cases_times_and_log_only() -> None:
    report = _report(
        time_ms=12.5,
        log="printed\n",
        log_scope="public",
        cases=[_case("shown", True, 2.5), _case("kept", False, 10.0)],
    )
    learner = detail(_submission(report), "alice", None, full=False)
    assert [c.time_ms for c in learner.cases] == [2.5, None]
    assert learner.time_ms == 2.5 and learner.log == "printed\n"
    admin = detail(_submission(report), "alice", None, full=True)
    assert [c.time_ms for c in admin.cases] == [2.5, 10.0] and admin.time_ms == 12.5


def test_a_submit_judged_before_hidden_cases_ran_apart_keeps_its_log_withheld() -> None:
    """Its code printed in the process that held the hidden cases."""
    report = _report(time_ms=1.0, log="hidden input: 8675.309\n", cases=[_case("shown", True, 1.0)])
    assert detail(_submission(report), "alice", None, full=False).log is None
    assert detail(_submission(report), "alice", None, full=True).log == "hidden input: 8675.309\n"


def test_where_the_error_is_and_the_part_to_solve_first_come_with_the_message() -> None:
    """A public case tells its line and the problem to solve first; a hidden case, as its
    message, neither (an admin reads both)."""
    message = {"zh": "出错", "en": "raised"}
    failing = {"verdict": "RE", "score": 0, "message": message, "line": 7, "missing_problem": "203"}
    cases = [_case("shown", True, 1.0, **failing), _case("kept", False, 1.0, **failing)]
    report = _report(version=2, verdict="RE", cases=cases)
    learner = detail(_submission(report), "alice", None, full=False)
    assert [(c.line, c.missing_problem) for c in learner.cases] == [(7, "203"), (None, None)]
    admin = detail(_submission(report), "alice", None, full=True)
    assert [(c.line, c.missing_problem) for c in admin.cases] == [(7, "203"), (7, "203")]


def test_a_row_whose_report_cannot_be_read_still_shows_its_verdict(caplog: pytest.LogCaptureFixture) -> None:
    """Not a 500: the submission reads, with its verdict and score (columns of their own), no
    cases, and `unreadable` set; the server's log says what is wrong."""
    shown = detail(_submission(_report(cases="all of them")), "alice", None, full=False)
    assert shown.unreadable and shown.cases == [] and (shown.verdict, shown.status) == ("AC", "done")
    assert "submission 1" in caplog.text and "cases" in caplog.text
    assert not detail(_submission(_report()), "alice", None, full=False).unreadable


def test_the_api_answers_a_row_it_cannot_read_without_a_server_error(tmp_path: Path) -> None:
    with make_client(make_settings(tmp_path, workers=0)) as client:
        name, token = register(client)
        with platform_of(client).factory() as db, db.begin():
            user_id = db.scalar(select(User.id).where(User.username == name))
            assert user_id is not None
            report = _report(cases=[{"name": "no verdict"}])
            sub = Submission(user_id=user_id, problem_id="204", mode=Mode.SUBMIT, code="", report=report)
            sub.status, sub.verdict = SubmissionStatus.DONE, "AC"
            db.add(sub)
            db.flush()
            sub_id = sub.id
        res = client.get(f"/api/submissions/{sub_id}", headers=bearer(token))
        assert res.status_code == 200, res.text
        body = res.json()
        assert body["unreadable"] is True and body["cases"] == [] and body["verdict"] == "AC"


def test_the_api_schema_has_the_fields_the_front_end_reads() -> None:
    stub = cast(Platform, object())  # the schema depends on the routes alone
    schemas = create_app(platform=stub).openapi()["components"]["schemas"]
    assert {"line", "missing_problem"} <= set(schemas["CaseOut"]["properties"])
    assert "unreadable" in schemas["SubmissionDetail"]["properties"]
    assert "unreadable" in schemas["ScratchView"]["properties"]
