"""The sandbox interface's own rules: a runner spec, the two time-outs, the retry of the
sandbox's failures (no engine or process needed)."""

from __future__ import annotations

import time

import pytest

from judge.core.backend import Outcome, RunnerSpec
from sandbox.engine import EngineFailure, retried


def test_a_runner_spec_names_its_preload_and_entry_together() -> None:
    assert RunnerSpec(("-m", "judge.core.runner"), preload="m:prepare", entry="m:main").poolable
    assert not RunnerSpec(("-c", "pass")).poolable
    with pytest.raises(ValueError, match="both"):
        RunnerSpec(("-m", "x"), entry="x:main")
    assert RunnerSpec(("-m", "x")).cold_argv("/usr/bin/python3") == ["/usr/bin/python3", "-m", "x"]


@pytest.mark.parametrize(
    ("ready_s", "ran_out", "timed_out", "startup_timed_out"),
    [
        (None, True, False, True),
        (0.5, True, True, False),
        (0.5, False, False, False),
        (None, False, False, False),
    ],
)
def test_a_clock_that_ran_out_is_the_start_ups_until_the_runner_is_ready(
    ready_s: float | None, ran_out: bool, timed_out: bool, startup_timed_out: bool
) -> None:
    out = Outcome.of_run(
        b"", b"", exit_code=None, signal=9, wall_s=1.0, ready_s=ready_s, clock_ran_out=ran_out
    )
    assert (out.timed_out, out.startup_timed_out) == (timed_out, startup_timed_out)


def test_the_sandboxs_failures_are_retried_with_a_pause_and_then_reported() -> None:
    tries: list[float] = []

    def flaky() -> Outcome:
        tries.append(time.monotonic())
        if len(tries) == 1:
            raise EngineFailure("the engine hiccuped")
        if len(tries) == 2:
            return Outcome.failed("the fork server broke")
        return Outcome(b"R", b"", 0, None, 0.1)

    assert retried(3, flaky, "the sandbox").result == b"R"
    assert len(tries) == 3 and tries[1] - tries[0] >= 0.5 and tries[2] - tries[1] >= 1.0

    def broken() -> Outcome:
        raise ConnectionError("no engine")

    out = retried(2, broken, "the Docker engine")
    assert out.system_error == "the Docker engine failed 2 times: no engine"


def test_what_the_learners_code_caused_is_not_retried() -> None:
    calls = []

    def timed_out() -> Outcome:
        calls.append(1)
        return Outcome.of_run(b"", b"", exit_code=None, signal=9, wall_s=3, ready_s=0.1, clock_ran_out=True)

    assert retried(3, timed_out, "the sandbox").timed_out and len(calls) == 1
