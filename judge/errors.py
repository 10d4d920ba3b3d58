"""Where the judge and the web take the root of their errors from: `except JudgeError` catches
every error of the judge's own (a package, a course, the settings, a trusted run, a usage error),
of the sandbox (`SandboxError`) and of the web platform. The classes live in sandbox/errors.py,
the lowest layer, so that the sandbox's errors are under the same root without the sandbox
importing the judge. Standard library only: the practice kit copies this module (judge/kit.py)."""

from __future__ import annotations

from sandbox.errors import JudgeError, SandboxError

__all__ = ["JudgeError", "SandboxError"]
