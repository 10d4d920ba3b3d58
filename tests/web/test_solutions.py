"""GET /api/problems/{id}/solutions: closed until the learner's own AC, then the reference, the
accepted formulations, their notes in the reader's language, and the learner's time beside the
reference's. Real workers and the real judge (local backend) on a tiny package; SQLite, and
PostgreSQL when JUDGE_TEST_POSTGRES_URL is set."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import func, select

from tests.factories import make_package
from tests.web.factories import bearer, make_client, make_settings, register, submit, wait_done
from web.solutions.models import ReferenceTiming

SUM = "def f(x):\n    return x + x\n"
# A reference that takes a known time on every case, so that its measured time can be checked.
SLOW_REFERENCE = "import time\n\ndef f(x):\n    time.sleep(0.04)\n    return x * 2\n"
NOTES = """
[reference]
zh = "乘以 2，dtype 不变。"
en = "Multiplies by 2, keeping the dtype."
[accepted.sum]
zh = "x + x 与 2x 逐位相同。"
en = "x + x is bit for bit 2x."
"""


@pytest.mark.parametrize("dialect", ["sqlite", "postgresql"])
def test_solutions_open_after_an_accepted_submit_only(
    dialect: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    url = None if dialect == "sqlite" else request.getfixturevalue("postgres_url")
    make_package(tmp_path / "problems", accepted={"sum": SUM}, notes=NOTES, reference=SLOW_REFERENCE)
    # The Docker sandbox's fork server where there is one (always under CI): a judgement costs tens
    # of milliseconds there, against a new Python process each on the local backend.
    settings = make_settings(tmp_path, database_url=url, problems_dir=tmp_path / "problems", backend="auto")
    with make_client(settings) as client:
        _, alice = register(client)
        _, bob = register(client)
        path = "/api/problems/901/solutions"
        assert client.get(path).status_code == 401

        def refused(token: str) -> None:
            res = client.get(path, headers=bearer(token), params={"lang": "en"})
            assert res.status_code == 403, res.text
            error = res.json()["error"]
            assert error["code"] == "not_solved_yet"
            assert (
                error["message"] == "The solutions open once you have an accepted submission of this problem."
            )

        refused(alice)
        # Neither a Run that passes nor a Submit that fails opens them.
        assert wait_done(client, alice, submit(client, alice, SUM, "901", mode="run"))["verdict"] == "AC"
        refused(alice)
        wrong = wait_done(client, alice, submit(client, alice, "def f(x):\n    return x * 3\n", "901"))
        assert wrong["verdict"] == "WA"
        refused(alice)

        done = wait_done(client, alice, submit(client, alice, SUM, "901"))
        assert done["verdict"] == "AC"
        res = client.get(path, headers=bearer(alice), params={"lang": "en"})
        assert res.status_code == 200, res.text
        body = res.json()
        assert [(s["name"], s["code"], s["note"]) for s in body["solutions"]] == [
            ("reference", SLOW_REFERENCE, "Multiplies by 2, keeping the dtype."),
            ("accepted/sum", SUM, "x + x is bit for bit 2x."),
        ]
        zh = client.get(path, headers=bearer(alice), params={"lang": "zh"}).json()
        assert [s["note"] for s in zh["solutions"]] == ["乘以 2，dtype 不变。", "x + x 与 2x 逐位相同。"]

        timing = body["timing"]
        assert timing["submission_id"] == done["id"]
        assert timing["backend"] == client.app.state.platform.judge.backend.name  # type: ignore[attr-defined]
        assert [c["name"] for c in timing["cases"]] == ["double", "double_bf16"]
        # A learner reads the public cases' times on the submission (a hidden case's time could
        # carry what the code read of it); after their AC, the timing shows every case.
        assert [c["time_ms"] is None for c in done["cases"]] == [False, True]
        yours = {c["name"]: c["yours_ms"] for c in timing["cases"]}
        assert yours["double"] == done["cases"][0]["time_ms"] and yours["double_bf16"] >= 0
        # The reference judged as a Submit: each case's median takes the 40 ms it sleeps, and the
        # learner's x + x is faster.
        assert all(40 <= c["reference_ms"] < 1000 for c in timing["cases"]), timing
        assert all(c["yours_ms"] < 40 for c in timing["cases"]), timing
        assert timing["ratio"] < 1
        assert timing["yours_ms"] == round(sum(yours.values()), 1)
        assert timing["reference_ms"] == round(sum(c["reference_ms"] for c in timing["cases"]), 1)
        assert timing["ratio"] == round(timing["yours_ms"] / timing["reference_ms"], 2)
        ratios = sorted(c["yours_ms"] / c["reference_ms"] for c in timing["cases"])
        assert timing["typical_ratio"] == round((ratios[0] + ratios[1]) / 2, 2)  # two cases: their mean

        # Measured once per version: a later reader, and a later accepted submit, get the same
        # reference numbers, from one stored row.
        again = wait_done(client, alice, submit(client, alice, "def f(x):\n    return 2 * x\n", "901"))
        later = client.get(path, headers=bearer(alice)).json()["timing"]
        assert later["submission_id"] == again["id"]
        assert [c["reference_ms"] for c in later["cases"]] == [c["reference_ms"] for c in timing["cases"]]
        first = client.get(path, headers=bearer(alice), params={"submission": done["id"]}).json()["timing"]
        assert first == timing
        with client.app.state.platform.factory() as db:  # type: ignore[attr-defined]
            assert db.scalar(select(func.count()).select_from(ReferenceTiming)) == 1

        # A failed submit of one's own has nothing to compare; another's submission is not theirs.
        assert (
            client.get(path, headers=bearer(alice), params={"submission": wrong["id"]}).json()["timing"]
            is None
        )
        refused(bob)
        _, carol = register(client)
        assert wait_done(client, carol, submit(client, carol, SUM, "901"))["verdict"] == "AC"
        res = client.get(path, headers=bearer(carol), params={"submission": done["id"]})
        assert res.status_code == 404 and res.json()["error"]["code"] == "not_found"
        assert client.get("/api/problems/999/solutions", headers=bearer(carol)).status_code == 404

        # The page's tab: open for a solver, locked (with why) for a visitor and for Bob.
        assert 'id="tab-solutions"' in (page := client.get("/problems/901").text)
        assert 'data-state="locked"' in page and "/login?next=/problems/901" in page
        assert 'data-state="locked"' in client.get("/problems/901", headers=bearer(bob)).text
        assert 'data-state="open"' in client.get("/problems/901", headers=bearer(alice)).text


def test_a_package_without_notes_still_shows_its_code(tmp_path: Path) -> None:
    make_package(tmp_path / "problems", accepted={"sum": SUM}, notes="")
    settings = make_settings(tmp_path, problems_dir=tmp_path / "problems")
    with make_client(settings) as client:
        _, alice = register(client)
        assert wait_done(client, alice, submit(client, alice, SUM, "901"))["verdict"] == "AC"
        body = client.get("/api/problems/901/solutions", headers=bearer(alice)).json()
        assert [(s["name"], s["note"]) for s in body["solutions"]] == [
            ("reference", ""),
            ("accepted/sum", ""),
        ]
