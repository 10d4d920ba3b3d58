"""The two ends of a forked runner child, shared by both fork servers (sandbox/forkserver.py in a
container, judge/core/forked.py on the learner's machine) and the runner's `__main__`.

A waiting child reads its job's limits from a pipe until the server closes it; once its entry
point returns, it leaves without the interpreter's shutdown, which would wait for threads the
learner's code started and run its atexit hooks after the result stream is complete."""

from __future__ import annotations

import contextlib
import json
import os
import sys
import traceback
from collections.abc import Callable
from typing import Any, NoReturn

CHUNK = 1 << 16


def wait_for_limits(fd: int) -> dict[str, Any] | None:
    """The job's limits, once the server sends them and closes the pipe (None: it closed the
    pipe with nothing in it, because it is gone or lets this child go)."""
    data = bytearray()
    while chunk := os.read(fd, CHUNK):
        data += chunk
    os.close(fd)
    if not data:
        return None
    limits: dict[str, Any] = json.loads(data)
    return limits


def leave(code: int) -> NoReturn:
    """Out at once, with what was written flushed."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)


def run_and_leave(entry: Callable[[], Any]) -> NoReturn:
    """The entry point, then out with its code (1 for an exception, which goes to stderr)."""
    code = 1
    try:
        code = int(entry() or 0)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:
        with contextlib.suppress(Exception):
            traceback.print_exc()
    finally:
        leave(code)
