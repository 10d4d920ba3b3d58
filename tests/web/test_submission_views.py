"""web.submissions.views: what a learner reads of a stored report, old and new."""

from __future__ import annotations

from typing import Any

from web.db import utcnow
from web.submissions.models import Mode, Submission, SubmissionStatus
from web.submissions.views import detail


def _case(name: str, public: bool, time_ms: float) -> dict[str, Any]:
    return {
        "name": name,
        "public": public,
        "verdict": "AC",
        "score": 1,
        "max_score": 1,
        "time_ms": time_ms,
        "ran": True,
        "message": None,
    }


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
    report = {
        "time_ms": 12.5,
        "log": "printed\n",
        "log_scope": "public",
        "cases": [_case("shown", True, 2.5), _case("kept", False, 10.0)],
    }
    learner = detail(_submission(report), "alice", None, full=False)
    assert [c.time_ms for c in learner.cases] == [2.5, None]
    assert learner.time_ms == 2.5 and learner.log == "printed\n"
    admin = detail(_submission(report), "alice", None, full=True)
    assert [c.time_ms for c in admin.cases] == [2.5, 10.0] and admin.time_ms == 12.5


def test_a_submit_judged_before_hidden_cases_ran_apart_keeps_its_log_withheld() -> None:
    """Its code printed in the process that held the hidden cases."""
    report = {"time_ms": 1.0, "log": "hidden input: 8675.309\n", "cases": [_case("shown", True, 1.0)]}
    assert detail(_submission(report), "alice", None, full=False).log is None
    assert detail(_submission(report), "alice", None, full=True).log == "hidden input: 8675.309\n"
