"""A time-out shows the time the cut-off case ran, not the milliseconds of the cases before it.

The runner never reports the case it is killed in, so that case's time comes from the run's
clock (issue 20: a TLE read "4.1 ms" and "0.0 ms" after ten seconds)."""

from __future__ import annotations

from pathlib import Path

import pytest

from judge.core.backend import Limits, Outcome
from judge.core.execution import interpret
from judge.core.protocol import encode_frame, parse_stream
from judge.core.verdicts import Verdict
from judge.expected import ExpectedStore
from tests.factories import judge, make_package

LIMITS = Limits(startup_s=5, wall_s=2, cpu_s=10, memory_bytes=1 << 28, log_bytes=4096)


def _stream(*heads: dict[str, object]) -> bytes:
    return b"".join(encode_frame(dict(head)) for head in heads)


def _timed_out(result: bytes, wall_s: float, ready_s: float) -> Outcome:
    return Outcome.of_run(
        result, b"", exit_code=None, signal=9, wall_s=wall_s, ready_s=ready_s, clock_ran_out=True
    )


def test_the_cut_off_case_gets_the_clock_time_less_the_reported_cases() -> None:
    hello = {"kind": "hello", "torch": "2", "python": "3", "protocol": 1}
    load = {"kind": "load", "solution": 0, "status": "ok"}
    case = {"kind": "case", "solution": 0, "case": "a", "status": "error", "time_ms": 300.0, "message": "x"}
    data = _stream(hello, load, case)
    run = interpret(parse_stream(data), _timed_out(data, wall_s=3.5, ready_s=1.0), 1, LIMITS)
    assert run.stop is not None and run.stop.verdict == Verdict.TLE
    assert run.stop.ran_ms == pytest.approx(2500 - 300)


def test_a_stop_that_is_not_the_clock_carries_no_time() -> None:
    hello = {"kind": "hello", "torch": "2", "python": "3", "protocol": 1}
    data = _stream(hello, {"kind": "load", "solution": 0, "status": "ok"})
    ended = Outcome.of_run(data, b"", exit_code=1, signal=None, wall_s=3.0, ready_s=1.0, clock_ran_out=False)
    run = interpret(parse_stream(data), ended, 1, LIMITS)
    assert run.stop is not None and run.stop.verdict == Verdict.RE
    assert run.stop.ran_ms == 0.0


@pytest.mark.slow
def test_a_time_out_reads_about_the_limit(tmp_path: Path, store: ExpectedStore) -> None:
    pkg = make_package(tmp_path, time_s=1.5)
    # Fast on the public float32 case, endless on the bf16 one.
    src = "import torch\ndef f(x):\n    while x.dtype == torch.bfloat16:\n        pass\n    return x * 2\n"
    report = judge(pkg, src, store)
    fast, slow = report.cases
    assert fast.verdict == Verdict.AC and fast.time_ms < 1000
    assert slow.verdict == Verdict.TLE
    assert 1400 <= slow.time_ms < 1500 + 2000, slow.time_ms  # the limit, plus scheduling slack
    assert report.time_ms >= 1400
    assert fast.ran and slow.ran  # both ran: their times are measured, shown as times


@pytest.mark.slow
def test_cases_that_never_ran_say_so_instead_of_zero_ms(tmp_path: Path, store: ExpectedStore) -> None:
    pkg = make_package(tmp_path)
    report = judge(pkg, "def f(x:\n", store)  # does not load: no case runs
    assert report.cases and all(not c.ran for c in report.cases)
    assert all(c["ran"] is False for c in report.to_dict()["cases"])
