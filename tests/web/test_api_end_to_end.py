"""The HTTP API end to end, as a script uses it: real SQLite, real workers, the real judge.

Judging starts a Python process with torch, so the judged flows are shared: one server
(module scope) judges a small scripted session once, and the tests read what it produced.
Tests that judge nothing run on their own fresh app with no workers.
"""

from __future__ import annotations

import importlib.metadata
import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from argon2 import PasswordHasher
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import func, select, update
from sqlalchemy.orm import Session, sessionmaker

import judge
from judge.authoring.package import Problem
from tests.web.factories import (
    METRICS_HEADERS,
    PASSWORD,
    PKG_204,
    bearer,
    make_client,
    make_settings,
    platform_of,
    read_204,
    register,
    submit,
    unique_name,
    wait_done,
)
from web.app import create_app
from web.auth.models import ApiToken, LoginAttempt, LoginSession, User
from web.db import utcnow
from web.submissions.models import Submission, SubmissionEvent

PROBLEM = Problem(PKG_204)
REFERENCE = read_204("reference.py")
WRONG_NAME = "stats_in_input_dtype"
WRONG = read_204(f"solutions/wrong/{WRONG_NAME}.py")
WRONG_HINT = next(f.hint() for f in PROBLEM.solutions("wrong") if f.path.stem == WRONG_NAME)
ALL_CASES = [c.name for c in PROBLEM.select_cases("all")]
PUBLIC_CASES = [c.name for c in PROBLEM.select_cases("public")]
PUBLIC_POINTS = sum(c.points for c in PROBLEM.select_cases("public"))


# ---------------------------------------------------------------- helpers


def db(client: TestClient) -> sessionmaker[Session]:
    return platform_of(client).factory


def assert_error(res: Any, status: int, code: str) -> None:
    assert res.status_code == status, res.text
    body = res.json()
    assert set(body) == {"error"}, body
    assert body["error"]["code"] == code, body
    assert isinstance(body["error"]["message"], str) and body["error"]["message"], body


def make_admin(client: TestClient) -> str:
    """A new account made admin in the database; returns its API token."""
    name, token = register(client, unique_name("admin"))
    with db(client)() as session, session.begin():
        user = session.scalar(select(User).where(User.username == name))
        assert user is not None
        user.role = "admin"
    return token


def events(client: TestClient, sub_id: int) -> list[str]:
    with db(client)() as session:
        return list(
            session.scalars(
                select(SubmissionEvent.kind)
                .where(SubmissionEvent.submission_id == sub_id)
                .order_by(SubmissionEvent.id)
            )
        )


def count_submissions(client: TestClient) -> int:
    with db(client)() as session:
        return int(session.scalar(select(func.count()).select_from(Submission)) or 0)


def scores(client: TestClient, token: str) -> list[dict[str, Any]]:
    res = client.get("/api/me/scores", headers=bearer(token))
    assert res.status_code == 200, res.text
    rows: list[dict[str, Any]] = res.json()
    return rows


def metric_samples(client: TestClient) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    res = client.get("/metrics", headers=METRICS_HEADERS)
    assert res.status_code == 200, res.text
    assert res.headers["content-type"].startswith("text/plain")
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(res.text)
        for s in family.samples
    }


def wait_until(condition: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"not true within {timeout} s")
        time.sleep(0.05)


def when(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp)


# ---------------------------------------------------------------- apps


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One reference cache for every app of this module: 204's reference runs once."""
    return tmp_path_factory.mktemp("expected-cache")


@pytest.fixture
def quiet(tmp_path: Path) -> Iterator[TestClient]:
    """A fresh app that judges nothing (workers=0): for what needs no verdict."""
    with make_client(make_settings(tmp_path, workers=0)) as client:
        yield client


def quiet_app(tmp_path: Path, **overrides: Any) -> TestClient:
    return make_client(make_settings(tmp_path, workers=0, **overrides))


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, cache_dir: Path) -> Iterator[TestClient]:
    settings = make_settings(tmp_path_factory.mktemp("server"), cache_dir=cache_dir, workers=2)
    with make_client(settings) as client:
        yield client


@dataclass(frozen=True)
class Flow:
    """What the scripted session of `flow` left behind."""

    zoe: str  # submits the reference first, then a worse solution
    zoe_token: str
    abe: str  # submits the reference later: ties with zoe, ranks after her
    abe_token: str
    ron_token: str  # only runs
    accepted: dict[str, Any]
    wrong: dict[str, Any]
    later: dict[str, Any]
    run: dict[str, Any]
    metrics: dict[tuple[str, tuple[tuple[str, str], ...]], float]


@pytest.fixture(scope="module")
def flow(server: TestClient) -> Flow:
    # Names chosen so that the alphabetical order is the opposite of the order of solving.
    zoe, zoe_token = register(server, unique_name("zoe"))
    abe, abe_token = register(server, unique_name("abe"))
    _, ron_token = register(server, unique_name("ron"))
    run_id = submit(server, ron_token, REFERENCE, mode="run")
    accepted_id = submit(server, zoe_token, REFERENCE)
    wrong_id = submit(server, zoe_token, WRONG)
    later_id = submit(server, abe_token, REFERENCE)
    run = wait_done(server, ron_token, run_id)
    accepted = wait_done(server, zoe_token, accepted_id)
    wrong = wait_done(server, zoe_token, wrong_id)
    later = wait_done(server, abe_token, later_id)

    # A worker counts a verdict just after writing it: wait until all four are counted.
    def counted() -> bool:
        samples = metric_samples(server)
        return sum(v for (name, _), v in samples.items() if name == "judge_verdicts_total") >= 4

    wait_until(counted)
    return Flow(
        zoe, zoe_token, abe, abe_token, ron_token, accepted, wrong, later, run, metric_samples(server)
    )


# ---------------------------------------------------------------- judged flows


@pytest.mark.slow
def test_the_reference_is_accepted_with_per_case_results(flow: Flow) -> None:
    sub = flow.accepted
    assert (sub["status"], sub["verdict"], sub["score"], sub["max_score"]) == ("done", "AC", 100, 100)
    assert (sub["mode"], sub["problem_id"], sub["username"]) == ("submit", "204", flow.zoe)
    assert sub["code"] == REFERENCE
    assert [c["name"] for c in sub["cases"]] == ALL_CASES
    assert all(c["verdict"] == "AC" and c["score"] == c["max_score"] for c in sub["cases"])
    assert sum(c["score"] for c in sub["cases"]) == 100
    assert {c["name"] for c in sub["cases"] if c["public"]} == set(PUBLIC_CASES)
    assert sub["finished_at"] is not None and sub["time_ms"] is not None
    assert isinstance(sub["log"], str)  # the public cases' job's output: it held no hidden case


@pytest.mark.slow
def test_a_submission_records_the_problem_version_it_was_judged_against(
    flow: Flow, server: TestClient
) -> None:
    assert flow.accepted["problem_version"] == PROBLEM.content_hash
    assert flow.run["problem_version"] == PROBLEM.content_hash
    assert server.get("/api/problems/204").json()["version"] == PROBLEM.content_hash


@pytest.mark.slow
def test_a_wrong_solution_gets_wa_and_its_hint_on_a_public_case(flow: Flow) -> None:
    sub = flow.wrong
    assert (sub["status"], sub["verdict"], sub["max_score"]) == ("done", "WA", 100)
    assert 0 < sub["score"] < 100
    assert sub["score"] == sum(c["score"] for c in sub["cases"])
    failing = [c for c in sub["cases"] if c["verdict"] == "WA"]
    public = [c for c in failing if c["public"]]
    hidden = [c for c in failing if not c["public"]]
    assert public and hidden
    assert all(c["message"] and c["description"] for c in public)
    # In the reader's language (Chinese by default): the hint's Chinese paragraph only.
    assert any(c["hint"] and c["hint"] == WRONG_HINT.zh for c in public), public
    # Hidden cases: nothing that tells their inputs or expected values.
    for c in (c for c in sub["cases"] if not c["public"]):
        assert c["message"] is None and c.get("error_map") is None, c
        assert all(d["message"] is None for d in c["diagnoses"]), c


@pytest.mark.slow
def test_results_come_in_the_readers_language_only(flow: Flow, server: TestClient) -> None:
    """?lang= first, then Accept-Language, then the account's language (Chinese here)."""

    def read(query: str = "", **headers: str) -> list[dict[str, Any]]:
        res = server.get(
            f"/api/submissions/{flow.wrong['id']}{query}", headers={**bearer(flow.zoe_token), **headers}
        )
        assert res.status_code == 200, res.text
        return [c for c in res.json()["cases"] if c["public"] and c["verdict"] == "WA"]

    def chinese(text: str | None) -> bool:
        return any("\u4e00" <= ch <= "\u9fff" for ch in text or "")

    for cases in (read("?lang=en"), read(**{"Accept-Language": "en-GB,en;q=0.8"})):
        assert cases and all(c["message"] and not chinese(c["message"]) for c in cases)
        assert all(not chinese(c["description"]) and not chinese(c["hint"]) for c in cases)
        assert any("elements differ" in c["message"] for c in cases)
    for cases in (read(), read("?lang=zh", **{"Accept-Language": "en"})):
        assert all(chinese(c["message"]) and "elements differ" not in c["message"] for c in cases)


@pytest.mark.slow
def test_run_judges_public_cases_only_and_is_not_scored(flow: Flow, server: TestClient) -> None:
    sub = flow.run
    assert (sub["mode"], sub["verdict"]) == ("run", "AC")
    assert [c["name"] for c in sub["cases"]] == PUBLIC_CASES
    assert sub["score"] == sub["max_score"] == PUBLIC_POINTS < 100
    assert isinstance(sub["log"], str)  # a run's output is shown: it saw public cases only
    assert scores(server, flow.ron_token) == []
    problems = server.get("/api/problems", headers=bearer(flow.ron_token)).json()
    row = next(p for p in problems if p["id"] == "204")
    assert (row["best_score"], row["solved"]) == (None, False)


@pytest.mark.slow
def test_the_best_score_is_the_max_over_submits(flow: Flow, server: TestClient) -> None:
    assert when(flow.wrong["created_at"]) > when(flow.accepted["created_at"])
    [row] = scores(server, flow.zoe_token)
    assert {k: row[k] for k in ("problem_id", "best_score", "max_score", "solved")} == {
        "problem_id": "204",
        "best_score": 100,
        "max_score": 100,
        "solved": True,
    }
    # Reached by the first submit; the worse later one changed nothing.
    assert when(row["improved_at"]) == when(flow.accepted["created_at"])
    problem = server.get("/api/problems/204", headers=bearer(flow.zoe_token)).json()
    assert (problem["best_score"], problem["solved"]) == (100, True)


@pytest.mark.slow
def test_the_leaderboard_breaks_ties_by_the_earlier_improvement(flow: Flow, server: TestClient) -> None:
    res = server.get("/api/leaderboard")  # public: no account needed
    assert res.status_code == 200, res.text
    rows = res.json()
    assert all({"rank", "name", "you", "score", "solved"} <= set(r) for r in rows)
    assert all("username" not in r for r in rows)  # a display name may stand for it
    ours = [r for r in rows if r["name"] in (flow.zoe, flow.abe)]
    assert [(r["name"], r["score"], r["solved"]) for r in ours] == [
        (flow.zoe, 100, 1),
        (flow.abe, 100, 1),
    ]
    assert ours[0]["rank"] < ours[1]["rank"]
    assert [r["rank"] for r in rows] == sorted(r["rank"] for r in rows)
    assert all(r["score"] > 0 for r in rows)  # the runner-only account is not listed


@pytest.mark.slow
def test_learners_see_only_their_own_submissions(flow: Flow, server: TestClient) -> None:
    mine = server.get("/api/submissions", params={"problem_id": "204"}, headers=bearer(flow.zoe_token))
    assert mine.status_code == 200, mine.text
    assert [s["id"] for s in mine.json()] == [flow.wrong["id"], flow.accepted["id"]]
    other = server.get(f"/api/submissions/{flow.later['id']}", headers=bearer(flow.zoe_token))
    assert_error(other, 404, "not_found")


@pytest.mark.slow
def test_metrics_count_the_verdicts(flow: Flow) -> None:
    samples = flow.metrics
    verdicts = {labels: v for (name, labels), v in samples.items() if name == "judge_verdicts_total"}
    assert verdicts == {
        (("mode", "run"), ("verdict", "AC")): 1.0,
        (("mode", "submit"), ("verdict", "AC")): 2.0,
        (("mode", "submit"), ("verdict", "WA")): 1.0,
    }
    assert samples[("judge_queue_depth", (("status", "done"),))] >= 4
    assert samples[("judge_latency_seconds_count", (("mode", "submit"),))] == 3.0


@pytest.mark.slow
def test_an_admin_rejudges_a_submission(flow: Flow, server: TestClient) -> None:
    sub_id = flow.wrong["id"]
    assert_error(
        server.post(f"/api/admin/submissions/{sub_id}/rejudge", headers=bearer(flow.zoe_token)),
        403,
        "admin_only",
    )
    admin = make_admin(server)
    assert_error(
        server.post("/api/admin/submissions/999999/rejudge", headers=bearer(admin)), 404, "not_found"
    )
    res = server.post(f"/api/admin/submissions/{sub_id}/rejudge", headers=bearer(admin))
    assert res.status_code == 200, res.text
    assert res.json() == {"queued": 1}
    back = server.get(f"/api/submissions/{sub_id}", headers=bearer(flow.zoe_token)).json()
    assert back["status"] in ("queued", "running") and back["verdict"] is None
    again = wait_done(server, flow.zoe_token, sub_id)
    assert (again["verdict"], again["score"]) == (flow.wrong["verdict"], flow.wrong["score"])
    assert when(again["finished_at"]) > when(flow.wrong["finished_at"])
    assert events(server, sub_id) == ["queued", "claimed", "done", "rejudge", "claimed", "done"]
    assert scores(server, flow.zoe_token)[0]["best_score"] == 100
    # An admin sees hidden cases in full.
    full = server.get(f"/api/submissions/{sub_id}", headers=bearer(admin)).json()
    assert all(c["message"] for c in full["cases"] if not c["public"] and c["verdict"] == "WA")


@dataclass(frozen=True)
class Restarted:
    client: TestClient
    token: str
    ids: list[int]
    judged: list[dict[str, Any]]


@pytest.fixture(scope="module")
def restarted(tmp_path_factory: pytest.TempPathFactory, cache_dir: Path) -> Iterator[Restarted]:
    """Three submissions queued on a server that judges nothing, judged after a "restart"."""
    where = tmp_path_factory.mktemp("restart")
    with make_client(make_settings(where, cache_dir=cache_dir, workers=0)) as first:
        _, token = register(first)
        ids = [
            submit(first, token, REFERENCE),
            submit(first, token, WRONG),
            submit(first, token, REFERENCE, mode="run"),
        ]
        statuses = [first.get(f"/api/submissions/{i}", headers=bearer(token)).json()["status"] for i in ids]
        assert statuses == ["queued"] * 3
        assert metric_samples(first)[("judge_queue_depth", (("status", "queued"),))] == 3
    # The first app is gone (its engine disposed); a new one opens the same database.
    with make_client(make_settings(where, cache_dir=cache_dir, workers=1)) as second:
        judged = [wait_done(second, token, i) for i in ids]
        yield Restarted(second, token, ids, judged)


@pytest.mark.slow
def test_a_restart_loses_no_queued_submission(restarted: Restarted) -> None:
    assert [(s["status"], s["mode"], s["verdict"]) for s in restarted.judged] == [
        ("done", "submit", "AC"),
        ("done", "submit", "WA"),
        ("done", "run", "AC"),
    ]
    assert all(s["problem_version"] == PROBLEM.content_hash for s in restarted.judged)
    [row] = scores(restarted.client, restarted.token)
    assert (row["best_score"], row["solved"]) == (100, True)


@pytest.mark.slow
def test_an_admin_rejudges_a_whole_problem(restarted: Restarted) -> None:
    client, token = restarted.client, restarted.token
    assert_error(client.post("/api/admin/problems/204/rejudge", headers=bearer(token)), 403, "admin_only")
    res = client.post("/api/admin/problems/204/rejudge", headers=bearer(make_admin(client)))
    assert res.status_code == 200, res.text
    assert res.json() == {"queued": 3}
    again = [wait_done(client, token, i) for i in restarted.ids]
    assert [s["verdict"] for s in again] == [s["verdict"] for s in restarted.judged]
    for before, after in zip(restarted.judged, again, strict=True):
        assert when(after["finished_at"]) > when(before["finished_at"])
        assert events(client, after["id"]).count("rejudge") == 1
    assert scores(client, token)[0]["best_score"] == 100


# ---------------------------------------------------------------- limits and errors (nothing judged)


def test_code_over_64_kib_is_refused_and_nothing_is_queued(quiet: TestClient) -> None:
    _, token = register(quiet)
    limit = 64 * 1024
    for code in ("#" * (limit + 1), "# " + "好" * (limit // 3)):  # bytes count, not characters
        res = quiet.post(
            "/api/submissions",
            json={"problem_id": "204", "code": code, "mode": "submit"},
            headers=bearer(token),
        )
        assert_error(res, 413, "code_too_large")
    assert count_submissions(quiet) == 0
    assert quiet.get("/api/submissions", headers=bearer(token)).json() == []
    submit(quiet, token, "#" * limit)  # exactly the limit is fine
    assert count_submissions(quiet) == 1


def test_an_unknown_problem_is_404(quiet: TestClient) -> None:
    _, token = register(quiet)
    res = quiet.post("/api/submissions", json={"problem_id": "999", "code": "x = 1"}, headers=bearer(token))
    assert_error(res, 404, "not_found")
    assert count_submissions(quiet) == 0
    assert_error(quiet.get("/api/problems/999"), 404, "not_found")


def test_submitting_needs_an_account(quiet: TestClient) -> None:
    res = quiet.post("/api/submissions", json={"problem_id": "204", "code": "x = 1"})
    assert_error(res, 401, "login_required")
    bad = quiet.get("/api/me", headers={"Authorization": "Basic abc"})
    assert_error(bad, 401, "bad_token")
    assert_error(quiet.get("/api/me", headers=bearer("jdg_unknown")), 401, "bad_token")


def assert_rate_limited(res: Any, window_s: float) -> None:
    assert_error(res, 429, "rate_limited")
    assert 0 < int(res.headers["retry-after"]) <= window_s


def test_submissions_are_rate_limited_per_user(tmp_path: Path) -> None:
    with quiet_app(tmp_path, submits_per_user=2, submit_window_s=60) as client:
        _, token = register(client)
        submit(client, token, "x = 1")
        submit(client, token, "x = 2")
        res = client.post(
            "/api/submissions", json={"problem_id": "204", "code": "x = 3"}, headers=bearer(token)
        )
        assert_rate_limited(res, 60)
        assert count_submissions(client) == 2
        _, other = register(client)
        submit(client, other, "x = 1")  # the limit is per user


def test_submissions_are_rate_limited_per_address(tmp_path: Path) -> None:
    with quiet_app(tmp_path, submits_per_user=100, submits_per_address=3, submit_window_s=30) as client:
        tokens = [register(client)[1] for _ in range(2)]
        submit(client, tokens[0], "x = 1")
        submit(client, tokens[0], "x = 2")
        submit(client, tokens[1], "x = 1")
        res = client.post(
            "/api/submissions", json={"problem_id": "204", "code": "x = 2"}, headers=bearer(tokens[1])
        )
        assert_rate_limited(res, 30)
        assert count_submissions(client) == 3


def test_failed_logins_are_rate_limited_per_username(tmp_path: Path) -> None:
    with quiet_app(tmp_path, login_failures_per_user=3, login_failures_per_address=100) as client:
        name, _ = register(client)
        other, _ = register(client)
        for _ in range(3):
            res = client.post("/api/auth/login", json={"username": name, "password": "wrong password"})
            assert_error(res, 401, "bad_credentials")
        # Now even the right password waits, on both ways in; the name's case does not matter.
        right = {"username": name.upper(), "password": PASSWORD}
        assert_rate_limited(client.post("/api/auth/login", json=right), 300)
        assert_rate_limited(client.post("/api/auth/token", json=right), 300)
        # Another account from the same address is not locked out.
        ok = client.post("/api/auth/login", json={"username": other, "password": PASSWORD})
        assert ok.status_code == 200, ok.text


def test_failed_logins_are_rate_limited_per_address(tmp_path: Path) -> None:
    with quiet_app(tmp_path, login_failures_per_user=100, login_failures_per_address=3) as client:
        name, _ = register(client)
        for i in range(3):  # guessing several names, existing or not
            res = client.post("/api/auth/token", json={"username": f"guess{i}", "password": "password1"})
            assert_error(res, 401, "bad_credentials")
        res = client.post("/api/auth/login", json={"username": name, "password": PASSWORD})
        assert_rate_limited(res, 300)


def test_retry_after_counts_from_the_oldest_failure_in_the_window(tmp_path: Path) -> None:
    with quiet_app(tmp_path, login_failures_per_user=2, login_window_s=300) as client:
        name, _ = register(client)
        for _ in range(2):
            res = client.post("/api/auth/login", json={"username": name, "password": "wrong password"})
            assert_error(res, 401, "bad_credentials")
        with db(client)() as session:
            ids = list(session.scalars(select(LoginAttempt.id).order_by(LoginAttempt.id)))

        def age(seconds: dict[int, float]) -> None:
            with db(client)() as session, session.begin():
                for attempt_id, s in seconds.items():
                    session.execute(
                        update(LoginAttempt)
                        .where(LoginAttempt.id == attempt_id)
                        .values(at=utcnow() - timedelta(seconds=s))
                    )

        right = {"username": name, "password": PASSWORD}
        age({ids[0]: 290, ids[1]: 200})  # the older one leaves the window in 10 s
        res = client.post("/api/auth/login", json=right)
        assert_rate_limited(res, 300)
        assert 9 <= int(res.headers["retry-after"]) <= 11
        age({ids[0]: 301})  # it has left: one more try is allowed
        assert client.post("/api/auth/login", json=right).status_code == 200


def test_retry_after_of_a_submission_limit(tmp_path: Path) -> None:
    with quiet_app(tmp_path, submits_per_user=1, submit_window_s=60) as client:
        _, token = register(client)
        sub_id = submit(client, token, "x = 1")
        with db(client)() as session, session.begin():
            session.execute(
                update(Submission)
                .where(Submission.id == sub_id)
                .values(created_at=utcnow() - timedelta(seconds=45))
            )
        res = client.post(
            "/api/submissions", json={"problem_id": "204", "code": "x = 2"}, headers=bearer(token)
        )
        assert_rate_limited(res, 60)
        assert 14 <= int(res.headers["retry-after"]) <= 16


# Text that a database cannot store must be refused as bad input, never end in a 500: a lone
# surrogate cannot be encoded as UTF-8 (anywhere), a NUL cannot be stored in PostgreSQL text.
BAD_TEXT = {
    "surrogate in code": ("POST", "/api/submissions", {"problem_id": "204", "code": "x = '\ud800'"}),
    "NUL in code": ("POST", "/api/submissions", {"problem_id": "204", "code": "x = 1\x00"}),
    "NUL in problem id": ("POST", "/api/submissions", {"problem_id": "20\x004", "code": "x = 1"}),
    "NUL in a query": ("GET", "/api/submissions?problem_id=20%004", None),
    "NUL in a path": ("GET", "/api/problems/20%004", None),
    "NUL in a login name": ("POST", "/api/auth/login", {"username": "a\x00b", "password": "password1"}),
    "NUL in a token name": ("POST", "/api/me/tokens", {"name": "a\x00b"}),
}


def bad_text_params() -> Iterator[Any]:
    for dialect in ("sqlite", "postgresql"):
        for name in BAD_TEXT:
            yield pytest.param(dialect, name, id=f"{dialect}-{name.replace(' ', '_')}")


@pytest.mark.parametrize(("dialect", "case"), list(bad_text_params()))
def test_text_a_database_cannot_store_is_refused_not_a_500(
    dialect: str, case: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    url = None if dialect == "sqlite" else request.getfixturevalue("postgres_url")
    app = create_app(make_settings(tmp_path, database_url=url, workers=0))
    with TestClient(app, raise_server_exceptions=False) as client:
        _, token = register(client)
        method, path, body = BAD_TEXT[case]
        # Encoded by hand: json.dumps escapes a lone surrogate, as a browser's JSON.stringify does.
        content = None if body is None else json.dumps(body)
        headers = {**bearer(token), "content-type": "application/json"}
        res = client.request(method, path, content=content, headers=headers)
        assert res.status_code == 422, res.text
        assert res.json()["error"]["code"] == "invalid_request"


# ---------------------------------------------------------------- sessions, tokens, passwords


def test_cookie_login_csrf_and_logout(quiet: TestClient) -> None:
    name, _ = register(quiet)
    res = quiet.post("/api/auth/login", json={"username": name, "password": PASSWORD})
    assert res.status_code == 200, res.text
    csrf = res.json()["csrf_token"]
    raw = res.cookies["judge_session"]
    set_cookie = res.headers["set-cookie"]
    assert "HttpOnly" in set_cookie and "samesite=lax" in set_cookie.lower() and "Path=/" in set_cookie

    me = quiet.get("/api/me")
    assert me.status_code == 200, me.text
    assert (me.json()["username"], me.json()["csrf_token"]) == (name, csrf)

    # An unsafe request with the cookie needs the CSRF token.
    assert_error(quiet.post("/api/me/tokens", json={"name": "x"}), 403, "csrf_failed")
    assert_error(
        quiet.post("/api/me/tokens", json={"name": "x"}, headers={"X-CSRF-Token": "no"}), 403, "csrf_failed"
    )
    sub = quiet.post("/api/submissions", json={"problem_id": "204", "code": "x = 1"})
    assert_error(sub, 403, "csrf_failed")
    made = quiet.post("/api/me/tokens", json={"name": "x"}, headers={"X-CSRF-Token": csrf})
    assert made.status_code == 201, made.text

    with db(quiet)() as session:
        stored = session.scalars(select(LoginSession)).all()
        assert len(stored) == 1 and stored[0].token_hash != raw and raw not in stored[0].token_hash

    assert_error(quiet.post("/api/auth/logout"), 403, "csrf_failed")
    out = quiet.post("/api/auth/logout", headers={"X-CSRF-Token": csrf})
    assert out.status_code == 204, out.text
    assert_error(quiet.get("/api/me"), 401, "login_required")
    # The session is gone on the server, not only forgotten by the browser.
    quiet.cookies.set("judge_session", raw)
    assert_error(quiet.get("/api/me"), 401, "login_required")
    with db(quiet)() as session:
        assert session.scalar(select(func.count()).select_from(LoginSession)) == 0


def test_an_expired_session_is_no_session(quiet: TestClient) -> None:
    name, _ = register(quiet)
    res = quiet.post("/api/auth/login", json={"username": name, "password": PASSWORD})
    assert res.status_code == 200, res.text
    assert quiet.get("/api/me").status_code == 200
    with db(quiet)() as session, session.begin():
        session.execute(update(LoginSession).values(expires_at=utcnow() - timedelta(seconds=1)))
    assert_error(quiet.get("/api/me"), 401, "login_required")


def test_api_tokens_are_shown_once_listed_by_prefix_revocable_and_stored_hashed(quiet: TestClient) -> None:
    name, first = register(quiet)
    # A second token takes the password again (a token cannot make one: test_account_security).
    body = {"username": name, "password": PASSWORD, "name": "laptop", "scope": "full"}
    res = quiet.post("/api/auth/token", json=body)
    assert res.status_code == 201, res.text
    created = res.json()
    token = created["token"]
    assert token.startswith("jdg_") and created["name"] == "laptop"
    assert quiet.get("/api/me", headers=bearer(token)).status_code == 200

    listed = quiet.get("/api/me/tokens", headers=bearer(token))
    assert listed.status_code == 200, listed.text
    assert first not in listed.text and token not in listed.text
    rows = {r["id"]: r for r in listed.json()}
    assert set(rows[created["id"]]) == {
        "id",
        "name",
        "prefix",
        "scope",
        "created_at",
        "expires_at",
        "last_used_at",
    }
    assert rows[created["id"]]["prefix"] == token[:10]
    assert rows[created["id"]]["last_used_at"] is not None

    with db(quiet)() as session:
        for row in session.scalars(select(ApiToken)):
            values = [str(getattr(row, c.key)) for c in ApiToken.__table__.columns]
            assert not any(t in v for t in (first, token) for v in values)
            assert len(row.token_hash) == 64

    # Someone else cannot revoke it; its owner can, and then it no longer works.
    _, stranger = register(quiet)
    assert_error(quiet.delete(f"/api/me/tokens/{created['id']}", headers=bearer(stranger)), 404, "not_found")
    assert quiet.delete(f"/api/me/tokens/{created['id']}", headers=bearer(first)).status_code == 204
    assert_error(quiet.get("/api/me", headers=bearer(token)), 401, "bad_token")
    assert_error(quiet.delete(f"/api/me/tokens/{created['id']}", headers=bearer(first)), 404, "not_found")
    assert created["id"] not in [r["id"] for r in quiet.get("/api/me/tokens", headers=bearer(first)).json()]
    assert quiet.get("/api/me", headers=bearer(first)).status_code == 200


def test_passwords_are_stored_as_argon2_hashes(quiet: TestClient) -> None:
    name, _ = register(quiet)
    with db(quiet)() as session:
        user = session.scalar(select(User).where(User.username == name))
        assert user is not None
        assert user.password_hash.startswith("$argon2id$")
        assert PASSWORD not in user.password_hash
        assert PasswordHasher().verify(user.password_hash, PASSWORD)


def test_registration_refuses_a_taken_name(quiet: TestClient) -> None:
    name, _ = register(quiet)
    res = quiet.post("/api/auth/register", json={"username": name.upper(), "password": PASSWORD})
    assert_error(res, 409, "username_taken")


# ---------------------------------------------------------------- operations


def test_healthz_and_metrics(quiet: TestClient) -> None:
    res = quiet.get("/healthz")
    assert res.status_code == 200, res.text
    assert {"status": "ok", "database": "ok"}.items() <= res.json().items()
    samples = metric_samples(quiet)
    assert samples[("judge_queue_depth", (("status", "queued"),))] == 0
    _, token = register(quiet)
    submit(quiet, token, "x = 1")
    samples = metric_samples(quiet)
    assert samples[("judge_queue_depth", (("status", "queued"),))] == 1
    assert samples[("judge_queue_depth", (("status", "done"),))] == 0


def test_healthz_names_the_installed_version(quiet: TestClient) -> None:
    """Operators tell servers apart (and see an upgrade took) by the version /healthz answers:
    the installed distribution's, which is judge.__version__."""
    version = quiet.get("/healthz").json()["version"]
    assert version == judge.__version__ == importlib.metadata.version("llm-judge")
    assert version.count(".") >= 2


@pytest.mark.slow
def test_a_long_poll_answers_when_the_status_changes(server: TestClient) -> None:
    _, token = register(server, unique_name("lp"))
    sub_id = submit(server, token, REFERENCE, mode="run")
    seen = []
    for _ in range(5):  # queued -> running -> done takes at most three answers
        res = server.get(f"/api/submissions/{sub_id}?wait=20", headers=bearer(token))
        assert res.status_code == 200
        seen.append(res.json()["status"])
        if seen[-1] == "done":
            break
    assert seen[-1] == "done" and len(seen) <= 3, seen
    assert res.json()["verdict"] == "AC"
    # Done already: no waiting at all; someone else's submission: not found, at once.
    assert server.get(f"/api/submissions/{sub_id}?wait=20", headers=bearer(token)).json()["status"] == "done"
    _, other = register(server, unique_name("lq"))
    assert server.get(f"/api/submissions/{sub_id}?wait=20", headers=bearer(other)).status_code == 404
    assert server.get(f"/api/submissions/{sub_id}?wait=99", headers=bearer(token)).status_code == 422
