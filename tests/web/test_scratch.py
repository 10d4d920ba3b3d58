"""The scratch cell through the platform: queued like a Run, judged by a worker (real SQLite,
the local backend), read by its owner with a long-poll, and seen nowhere else."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from tests.web.factories import bearer, make_client, make_settings, read_204, register
from web.db import make_engine
from web.scratch.service import KEPT
from web.submissions.models import Mode, Submission, SubmissionEvent, SubmissionStatus

pytestmark = pytest.mark.slow


def wait_scratch(client: TestClient, token: str, scratch_id: int, timeout: float = 120.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        res = client.get(f"/api/scratch/{scratch_id}?wait=20", headers=bearer(token))
        assert res.status_code == 200, res.text
        body: dict[str, Any] = res.json()
        if body["status"] == "done":
            return body
    raise AssertionError(f"scratch {scratch_id} was not run within {timeout} s")


def test_a_scratch_run_is_judged_shown_to_its_owner_only_and_never_scored(tmp_path: Path) -> None:
    settings = make_settings(tmp_path)
    with make_client(settings) as client:
        _, alice = register(client)
        _, bob = register(client)
        snippet = "x = torch.randn(2, 8)\nprint('hi')\nRMSNorm(8)(x)\n"
        body = {"problem_id": "204", "code": read_204("reference.py"), "snippet": snippet}
        res = client.post("/api/scratch", json=body, headers=bearer(alice))
        assert res.status_code == 202, res.text
        sid = res.json()["id"]
        done = wait_scratch(client, alice, sid)
        result = done["result"]
        assert result["status"] == "ok" and result["log"] == "hi\n", result
        assert result["value"]["shape"] == [2, 8]
        (call,) = result["calls"]
        assert call["call"] == "RMSNorm(8)(float32[2, 8])" and call["match"] is True
        assert call["detail"].startswith("与参考答案一致")  # Chinese unless asked otherwise
        english = client.get(f"/api/scratch/{sid}?lang=en", headers=bearer(alice)).json()
        assert english["result"]["calls"][0]["detail"].startswith("matches the reference")

        # Nobody else's, and not a submission: no list, no detail, no attempt, no score.
        assert client.get(f"/api/scratch/{sid}", headers=bearer(bob)).status_code == 404
        assert client.get(f"/api/submissions/{sid}", headers=bearer(alice)).status_code == 404
        assert client.get("/api/submissions", headers=bearer(alice)).json() == []
        problem = next(
            p for p in client.get("/api/problems", headers=bearer(alice)).json() if p["id"] == "204"
        )
        assert problem["status"] == "new" and problem["best_score"] is None
        assert client.get("/api/me/scores", headers=bearer(alice)).json() == []

        # A submission's id is not a scratch run.
        sub = client.post(
            "/api/submissions",
            json={"problem_id": "204", "code": "x = 1\n", "mode": "run"},
            headers=bearer(alice),
        ).json()["id"]
        assert client.get(f"/api/scratch/{sub}", headers=bearer(alice)).status_code == 404


def test_scratch_runs_count_against_the_submission_rate_limit(tmp_path: Path) -> None:
    settings = make_settings(tmp_path, workers=0, submits_per_user=2)
    with make_client(settings) as client:
        _, alice = register(client)
        body = {"problem_id": "204", "code": "x = 1\n", "snippet": "1"}
        codes = [client.post("/api/scratch", json=body, headers=bearer(alice)).status_code for _ in range(3)]
        assert codes == [202, 202, 429]
        too_long = {**body, "snippet": "x" * 9000}
        assert client.post("/api/scratch", json=too_long, headers=bearer(alice)).status_code == 422
        unknown = {**body, "problem_id": "999"}
        assert client.post("/api/scratch", json=unknown, headers=bearer(alice)).status_code in (404, 429)


def test_a_learners_old_scratch_runs_go_but_never_those_the_rate_limit_counts(tmp_path: Path) -> None:
    settings = make_settings(tmp_path, workers=0)
    engine = make_engine(settings.sqlalchemy_url())

    def scratch_ids() -> list[int]:
        with Session(engine) as db:
            return list(db.scalars(select(Submission.id).where(Submission.mode == Mode.SCRATCH)))

    with make_client(settings) as client:
        _, alice = register(client)
        body = {"problem_id": "204", "code": "x = 1\n", "snippet": "1"}
        run = client.post("/api/submissions", json={**body, "mode": "run"}, headers=bearer(alice)).json()[
            "id"
        ]
        for _ in range(KEPT + 2):
            assert client.post("/api/scratch", json=body, headers=bearer(alice)).status_code == 202
        # Judged, but still within the rate window: all kept.
        with Session(engine) as db:
            db.execute(update(Submission).values(status=SubmissionStatus.DONE))
            db.commit()
        assert client.post("/api/scratch", json=body, headers=bearer(alice)).status_code == 202
        assert len(scratch_ids()) == KEPT + 3
        # Long ago: only the newest KEPT stay, with their events; the Run is not touched.
        with Session(engine) as db:
            db.execute(update(Submission).values(created_at=datetime(2000, 1, 1, tzinfo=UTC)))
            db.commit()
        newest = client.post("/api/scratch", json=body, headers=bearer(alice)).json()["id"]
        kept = scratch_ids()
        assert len(kept) == KEPT and newest in kept and max(kept) == newest
        with Session(engine) as db:
            events = set(db.scalars(select(SubmissionEvent.submission_id).distinct()))
            assert events == {run, *kept}
            assert db.scalar(select(func.count()).select_from(Submission).where(Submission.id == run)) == 1
    engine.dispose()


def test_the_references_answers_are_bounded_per_learner_and_problem(tmp_path: Path) -> None:
    """Each answer shows the reference's output on an input the learner chose; a bounded number
    per problem and window, counted across runs (so a lookup table cannot be built by asking
    many times), and the learner's own result is still shown beyond it."""
    settings = make_settings(tmp_path, scratch_replays_per_problem=3)
    with make_client(settings) as client:
        _, alice = register(client)
        _, bob = register(client)
        two_calls = "m = RMSNorm(8)\nm(torch.ones(2, 8))\nm(torch.zeros(2, 8))\n"
        body = {"problem_id": "204", "code": read_204("reference.py"), "snippet": two_calls}

        def calls(token: str) -> list[dict[str, Any]]:
            res = client.post("/api/scratch", json=body, headers=bearer(token))
            assert res.status_code == 202, res.text
            result: list[dict[str, Any]] = wait_scratch(client, token, res.json()["id"])["result"]["calls"]
            return result

        first, second = calls(alice), calls(alice)
        assert [c["reference"] is not None for c in first] == [True, True]
        # One answer left of three: the second call of the second run is refused, with its reason.
        assert [c["reference"] is not None for c in second] == [True, False]
        assert second[1]["match"] is None and "3" in second[1]["reason"], second[1]
        assert second[1]["learner"]  # the learner's own result is still shown
        assert all(c["reference"] is None for c in calls(alice))
        # Per learner: another's budget is whole.
        assert [c["reference"] is not None for c in calls(bob)] == [True, True]
