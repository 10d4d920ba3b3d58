"""The root of the errors this system raises about itself, and the sandbox's branch of it.

`JudgeError` is defined here, at the bottom of web → judge → sandbox, because the sandbox's own
errors must be under it and the sandbox imports nothing of the judge (tests/sandbox/test_imports.py);
the judge and the web take it from `judge.errors`. A Python `except` follows real base classes
only (an ABC's `register` does not count there), so one root has to be one class.

A learner's code's exceptions are not under it: what the runner raises into or around their code
(a forbidden call, a missing part or entry point, a case that cannot be set up on their objects)
must look like any other exception of theirs, and is judged, not reported as the judge's failure.
Standard library only: the practice kit copies this module (judge/kit.py).
"""

from __future__ import annotations


class JudgeError(Exception):
    """An error of the judge, its sandbox or the web platform, not of a learner's code. Each entry
    point catches it in one place and says its message in one line instead of a traceback."""


class SandboxError(JudgeError):
    """An error of a sandbox backend: the engine, the image, the pool, the wire, the filter."""
