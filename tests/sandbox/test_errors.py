"""The sandbox's branch of the errors' root (sandbox/errors.py): every exception the sandbox
defines is a `SandboxError`, so a `JudgeError` too, though the sandbox imports nothing of the
judge; and only the sandbox's are."""

from __future__ import annotations

import pytest

from judge.core.errors import JudgeError
from sandbox import wire
from sandbox.errors import SandboxError
from tests.judge.test_errors import exception_classes


def test_every_sandbox_exception_is_a_sandbox_error_and_only_those_are() -> None:
    classes = exception_classes()
    ours = {n: c for n, c in classes.items() if n.startswith("sandbox.") and c is not JudgeError}
    assert {"sandbox.engine.EngineFailure", "sandbox.image.ImageError", "sandbox.wire.WireError"} <= set(ours)
    assert [n for n, c in ours.items() if not issubclass(c, SandboxError)] == []
    assert {n for n, c in classes.items() if issubclass(c, SandboxError)} == set(ours)  # only the sandbox's


def test_one_except_judge_error_catches_the_sandbox_s() -> None:
    with pytest.raises(JudgeError, match="bad envelope"):
        wire.EnvelopeReader().feed(b"not an envelope of this protocol")
