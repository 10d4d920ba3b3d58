"""A call that had to refuse its input, observed with judge.core.casekit.outcome."""

from __future__ import annotations

from judge.core.casekit import outcome, read_outcome
from judge.core.checkers import exact
from tests.judge.core.diagnose.factories import diagnoses, kinds, make_case

CASE = make_case(checker=exact())


def _raise(exc: Exception) -> object:
    raise exc


def test_outcome_names_the_class_or_says_it_returned() -> None:
    assert outcome(lambda: _raise(ValueError("no"))) == "raised ValueError"
    assert outcome(lambda: None) == "returned normally"
    assert outcome(lambda: _raise(UnicodeError("a subclass"))) == "raised ValueError"
    assert outcome(lambda: _raise(KeyError("k")), expected=LookupError) == "raised LookupError"
    assert read_outcome("raised RuntimeError") == (True, "RuntimeError")
    assert read_outcome("returned normally") == (False, "")
    assert read_outcome("raised a flag") is None and read_outcome(3) is None


def test_an_input_that_had_to_be_refused() -> None:
    (d,) = diagnoses({"0x8": "raised ValueError"}, {"0x8": "returned normally"}, CASE)
    assert d.kind == "not_rejected" and "`0x8`" in d.text.en and "raise ValueError yourself" in d.text.en


def test_torchs_own_error_instead_of_the_check() -> None:
    (d,) = diagnoses({"bad": "raised ValueError"}, {"bad": "raised RuntimeError"}, CASE)
    assert d.kind == "wrong_exception" and "RuntimeError" in d.text.zh


def test_a_valid_input_refused() -> None:
    assert kinds({"t_0": "returned normally"}, {"t_0": "raised ValueError"}, CASE) == ["rejected_valid"]


def test_other_strings_are_not_outcomes() -> None:
    assert kinds({"mode": "greedy"}, {"mode": "sampled"}, CASE) == []
