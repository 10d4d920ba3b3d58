"""A minimal job for the sandbox's own tests: run the Python source that arrives on stdin.

The runner is what judging uses; this lets the sandbox tests look at a warm or fork-server
job from the inside (its user, limits, filter, folder, memory) without the judge. It gives
job code nothing the runner does not: both execute what they are sent.
"""

from __future__ import annotations

import os
import resource
import sys

from judge.core.backend import RunnerSpec

# The probe as a backend's runner: cold `python3 -m sandbox.probe`, pooled these three.
RUNNER = RunnerSpec(
    ("-m", "sandbox.probe"),
    preload="sandbox.probe:prepare",
    entry="sandbox.probe:main",
    warm="sandbox.probe:warm",
)
# What the waiting child was when its warm function ran (a job prints it).
WARMED: dict[str, object] = {}


def prepare() -> None:
    """Nothing to preload: the tests check the sandbox, not torch."""


def warm() -> None:
    """In a pooled job's child before its job comes: note who it is and what it has."""
    WARMED.update(
        uid=os.getuid(),
        cpu=resource.getrlimit(resource.RLIMIT_CPU)[0],
    )


def main() -> int:
    source = sys.stdin.read()
    sys.stdin.close()
    sys.stdout.write("ready\n")  # the first result byte marks the job as ready
    sys.stdout.flush()
    exec(compile(source, "<job>", "exec"), {"__name__": "__job__"})
    return 0


if __name__ == "__main__":  # cold: `python3 -m sandbox.probe`
    sys.exit(main())
