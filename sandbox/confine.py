"""`python3 -m sandbox.confine -m MODULE`: load the job's seccomp filter, then run MODULE as
`__main__`. How a cold container starts its runner.

A fork server's child loads the filter before its job (sandbox.forkserver); a cold container
has no server, and Docker's default profile alone lets a job ptrace the container's init (the
same uid in the same container): a job that attached to it stopped it, and the container could
no longer end. So the cold runner loads the same filter first, with pid 1 protected from
signals, and only then imports what it runs. A kernel that refuses the filter stops the run
before any job is read (the judge reports the sandbox's failure, never runs code unfiltered).
"""

from __future__ import annotations

import runpy
import sys

from sandbox import seccomp

USAGE = "usage: python3 -m sandbox.confine -m MODULE"
INIT_PID = 1  # docker-init: reaps and forwards signals for the job


def main(argv: list[str]) -> None:
    if len(argv) != 2 or argv[0] != "-m":
        raise SystemExit(USAGE)
    seccomp.install(protected=(INIT_PID,))
    sys.argv = [argv[1]]
    runpy.run_module(argv[1], run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main(sys.argv[1:])
