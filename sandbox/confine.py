"""`python3 -m sandbox.confine -m MODULE | -c CODE`: load the job's seccomp filter, then run
MODULE (or CODE) as `__main__`, as `python3` itself would. How a cold container starts its
runner (`RunnerSpec.cold_args` are those of `python3`).

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

USAGE = "usage: python3 -m sandbox.confine (-m MODULE | -c CODE) [ARG ...]"
INIT_PID = 1  # docker-init: reaps and forwards signals for the job


def main(argv: list[str]) -> None:
    if len(argv) < 2 or argv[0] not in ("-m", "-c"):
        raise SystemExit(USAGE)
    seccomp.install(protected=(INIT_PID,))
    flag, target, rest = argv[0], argv[1], argv[2:]
    if flag == "-m":
        sys.argv = [target, *rest]
        runpy.run_module(target, run_name="__main__", alter_sys=True)
    else:
        sys.argv = ["-c", *rest]
        exec(compile(target, "<string>", "exec"), {"__name__": "__main__", "__builtins__": __builtins__})


if __name__ == "__main__":
    main(sys.argv[1:])
