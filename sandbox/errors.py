"""The sandbox's branch of the system's errors (`JudgeError`, declared in the judge's core with
the backend interface that the sandbox implements)."""

from __future__ import annotations

from judge.core.errors import JudgeError


class SandboxError(JudgeError):
    """An error of a sandbox backend: the engine, the image, the pool, the wire, the filter."""
