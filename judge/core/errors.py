"""The root of the errors this system raises about itself.

Every error of the judge (a package, a course, the settings, a trusted run, a usage error), of
the sandbox (`sandbox.errors.SandboxError`) and of the web platform derives from `JudgeError`, so
each entry point catches them in one place. It is defined in the core, the lowest layer, which
the sandbox's backends implement and the practice kit copies. A Python `except` follows real base
classes only (an ABC's `register` does not count there), so one root has to be one class.

A learner's code's exceptions are not under it: what the runner raises into or around their code
(a forbidden call, a missing part or entry point, a case that cannot be set up on their objects)
must look like any other exception of theirs, and is judged, not reported as the judge's failure.
"""

from __future__ import annotations


class JudgeError(Exception):
    """An error of the judge, its sandbox or the web platform, not of a learner's code. Each entry
    point catches it in one place and says its message in one line instead of a traceback."""


class TrustedRunError(JudgeError):
    """The reference could not be run; the package or the runtime is broken (a system error)."""
