"""A problem with parts judged on the site: the parts are the learner's own accepted Submits.

Real SQLite, real workers, the real judge (local backend) on two tiny packages: 901 (the part,
module course.double) and 902 (imports it)."""

from __future__ import annotations

from pathlib import Path

from tests.judge.core.test_parts import USES_PART, course
from tests.web.factories import bearer, make_client, make_settings, register, submit, wait_done

DOUBLE = "def f(x):\n    return x + x\n"


def test_the_learners_latest_accepted_part_is_used_and_a_missing_one_is_named(tmp_path: Path) -> None:
    course(tmp_path / "problems")
    # The Docker sandbox's fork server where there is one (always under CI): a judgement there
    # costs tens of milliseconds, against a new Python process each on the local backend.
    settings = make_settings(tmp_path, problems_dir=tmp_path / "problems", backend="auto")
    with make_client(settings) as client:
        _, alice = register(client)
        _, bob = register(client)

        first = wait_done(client, alice, submit(client, alice, USES_PART, "902"))
        assert first["verdict"] == "CE"
        message = first["cases"][0]["message"]
        assert "course.double" in message and "/problems/901" in message, message
        assert first["cases"][0]["missing_problem"] == "901"
        # Code that could not run for a part not solved yet is no attempt: 902 is still new.
        mine = client.get("/api/problems", headers=bearer(alice)).json()
        assert {p["id"]: p["status"] for p in mine}["902"] == "new"
        assert client.get("/api/me/scores", headers=bearer(alice)).json() == []

        # A Run that passes, and a Submit that fails, are not an accepted part.
        assert wait_done(client, alice, submit(client, alice, DOUBLE, "901", mode="run"))["verdict"] == "AC"
        wrong = "def f(x):\n    return x * 3\n"
        assert wait_done(client, alice, submit(client, alice, wrong, "901"))["verdict"] == "WA"
        # A wrong part is an attempt at 901 (its own problem), and 902 still is not attempted.
        statuses = {p["id"]: p["status"] for p in client.get("/api/problems", headers=bearer(alice)).json()}
        assert (statuses["901"], statuses["902"]) == ("attempted", "new")
        assert wait_done(client, alice, submit(client, alice, USES_PART, "902"))["verdict"] == "CE"

        assert wait_done(client, alice, submit(client, alice, DOUBLE, "901"))["verdict"] == "AC"
        done = wait_done(client, alice, submit(client, alice, USES_PART, "902"))
        assert done["verdict"] == "AC", done
        assert done["parts"] == [
            {"problem": "901", "module": "course.double", "origin": "learner", "used": True}
        ]
        # Alice's part is hers alone.
        assert wait_done(client, bob, submit(client, bob, USES_PART, "902"))["verdict"] == "CE"
