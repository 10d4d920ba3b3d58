"""A step of the image build says what it does as it goes: the tool's output, line by line,
before the step ends; a failed step's error quotes the end of that output. No Docker needed."""

from __future__ import annotations

import time

import pytest

from sandbox.image import STEP_TAIL_LINES, ImageError, run_step


def test_output_streams_line_by_line_while_the_step_runs() -> None:
    heard: list[tuple[float, str]] = []
    script = "echo 'I: Retrieving Release'; echo 'W: on stderr' >&2; sleep 1; echo 'I: Base system installed'"
    started = time.monotonic()
    run_step(["sh", "-c", script], lambda line: heard.append((time.monotonic() - started, line)))
    assert [line for _, line in heard] == [
        "  I: Retrieving Release",
        "  W: on stderr",
        "  I: Base system installed",
    ]
    # The first lines came before the sleep was over, not all at the end.
    assert heard[1][0] < 0.9 <= heard[2][0], heard


def test_a_failed_step_quotes_the_end_of_its_output() -> None:
    heard: list[str] = []
    lines = f"for i in $(seq 1 {STEP_TAIL_LINES + 10}); do echo line-$i; done"
    script = f"{lines}; echo 'E: no such suite' >&2; exit 3"
    with pytest.raises(ImageError) as failed:
        run_step(["sh", "-c", script], heard.append)
    message = str(failed.value)
    assert "(exit 3)" in message and message.endswith("E: no such suite")
    assert "line-11\n" not in message and f"line-{STEP_TAIL_LINES + 10}" in message
    assert len(heard) == STEP_TAIL_LINES + 11


def test_an_accepted_exit_status_is_not_a_failure() -> None:
    heard: list[str] = []
    run_step(["sh", "-c", "echo partial; exit 1"], heard.append, ok=(0, 1))
    assert heard == ["  partial"]
