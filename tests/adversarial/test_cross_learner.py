"""One learner must never spoil another's judgement: attacks judged through the HTTP API.

A platform per sandbox mode (cold, warm, fork) with one judging thread and one pooled
container, so in fork mode the second learner's job normally runs in the very server that
ran the attack. For each attack: learner A submits it, learner B then submits correct code
that needs processes of its own (24 threads and a forked child), and B gets AC. A's code
ran once (claimed once, no requeue), and A's verdict is one the attack may get, with a
message free of the judge's own Python errors. An attack that tries to leave data for the next
job (and to read what an earlier job left) is submitted by a second attacker right after the
first, so that it runs where the first one's leftovers would be.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from tests.adversarial.hostile import CORRECT_WITH_THREADS, HOSTILE, Hostile
from tests.factories import make_package
from tests.web.factories import make_client, make_settings, register, submit, wait_done
from web.submissions.models import SubmissionEvent

pytestmark = [pytest.mark.docker, pytest.mark.slow]

MODES = ["cold", "warm", "fork"]
# The attacks on the sandbox and on the judge's reading of its output.
ATTACKS = [h for h in HOSTILE if h.name.startswith(("clone_parent_", "forged_frame_", "mqueue_"))]
# Attacks that read what an earlier job of the same code left: each is submitted twice.
LEAVE_FOR_THE_NEXT = ("mqueue_",)
PYTHON_ERRORS = ("Traceback", "ValueError", "OverflowError", "RuntimeError", "Exceeds the limit")


@pytest.fixture(scope="module", params=MODES)
def site(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, docker_backend: object
) -> Iterator[TestClient]:
    """A running platform judging in Docker, in one mode, with one pooled container."""
    tmp = tmp_path_factory.mktemp(f"site-{request.param}")
    problems = tmp / "problems"
    problems.mkdir()
    make_package(problems, time_s=2, memory_mb=256)
    with pytest.MonkeyPatch.context() as env:
        env.setenv("JUDGE_SANDBOX__MODE", request.param)
        env.setenv("JUDGE_SANDBOX__POOL_SIZE", "1")
        settings = make_settings(
            tmp,
            backend="docker",
            allow_unsandboxed=False,
            problems_dir=problems,
            cache_dir=Path(tmp / "cache"),
            workers=1,
        )
        with make_client(settings) as client:
            yield client


def claims(client: TestClient, sub_id: int) -> list[str]:
    factory = client.app.state.platform.factory  # type: ignore[attr-defined]
    with factory() as session:
        return list(
            session.scalars(
                select(SubmissionEvent.kind)
                .where(SubmissionEvent.submission_id == sub_id)
                .order_by(SubmissionEvent.id)
            )
        )


@pytest.mark.parametrize("attack", ATTACKS, ids=[h.name for h in ATTACKS])
def test_the_next_learner_is_judged_as_if_nothing_happened(site: TestClient, attack: Hostile) -> None:
    _, learner = register(site)

    for _ in range(2 if attack.name.startswith(LEAVE_FOR_THE_NEXT) else 1):
        _, attacker = register(site)
        hostile_id = submit(site, attacker, attack.source, problem_id="901")
        hostile = wait_done(site, attacker, hostile_id)
        assert hostile["verdict"] in attack.verdicts, hostile
        events = claims(site, hostile_id)
        assert events.count("claimed") == 1 and "requeued" not in events, events
        shown = " ".join(str(c.get("message") or "") for c in hostile["cases"])
        assert not [e for e in PYTHON_ERRORS if e in shown], shown

    after_id = submit(site, learner, CORRECT_WITH_THREADS, problem_id="901")
    after = wait_done(site, learner, after_id)
    assert after["verdict"] == "AC", [(c["name"], c["verdict"], c.get("message")) for c in after["cases"]]
