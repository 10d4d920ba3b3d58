"""A runner traceback reads in one language: our sentence in the reader's, Python's as it is."""

from __future__ import annotations

from judge.core.grading import runner_message
from judge.core.runner.tracebacks import OUTSIDE, OWN_FRAMES, learner_traceback, register_source

LEARNER = "<learner>"


def _raise_from(source: str) -> BaseException:
    register_source(LEARNER, source)
    try:
        exec(compile(source, LEARNER, "exec"), {})
    except Exception as exc:
        return exc
    raise AssertionError("the source did not raise")


def test_a_learner_frame_gets_one_header_per_language() -> None:
    text = learner_traceback(_raise_from("x = 1\ny = x / 0\n"), LEARNER)
    message = runner_message(text)
    assert message.en.startswith(OWN_FRAMES[1]) and OWN_FRAMES[0] not in message.en
    assert message.zh.startswith(OWN_FRAMES[0]) and OWN_FRAMES[1] not in message.zh
    for lang in (message.zh, message.en):  # the frame and Python's own line, in both
        assert "line 2" in lang and "ZeroDivisionError: division by zero" in lang


def test_an_error_outside_the_learners_code_says_so_once_per_language() -> None:
    message = runner_message(learner_traceback(_raise_from("raise ValueError('x')\n"), "<elsewhere>"))
    assert message.en.startswith(OUTSIDE[1]) and OUTSIDE[0] not in message.en
    assert message.zh.startswith(OUTSIDE[0]) and OUTSIDE[1] not in message.zh
