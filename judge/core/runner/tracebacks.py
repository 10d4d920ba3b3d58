"""Tracebacks cut to the learner's own frames, so the message points at their code, not ours."""

from __future__ import annotations

import linecache
import traceback
from types import TracebackType

MAX_FRAMES = 12
MAX_CHARS = 4000
# The runner writes our two sentences in English; the judge gives the Chinese reader the
# Chinese line instead (judge.core.grading.runner_message), so each reader sees one language.
OWN_FRAMES = ("Traceback (只显示你的代码):", "Traceback (your code only):")
OUTSIDE = (
    "(出错的位置不在你的代码里，而是在用例使用你的代码返回的结果时)",
    "(raised outside your code, while the case used what your code returned)",
)


def register_source(filename: str, source: str) -> None:
    """Let tracebacks show lines of code that was compiled from a string."""
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)


def exception_line(exc: BaseException) -> str:
    text = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    return text[:MAX_CHARS]


def learner_traceback(exc: BaseException, learner_files: str | tuple[str, ...]) -> str:
    """The exception with only the frames in the learner's files (their solution, and their
    own parts such as qwen/norm.py); says so when there are none."""
    files = (learner_files,) if isinstance(learner_files, str) else learner_files
    frames = [f for f in traceback.extract_tb(_tb(exc)) if f.filename in files][-MAX_FRAMES:]
    lines = []
    if frames:
        lines.append(OWN_FRAMES[1] + "\n")
        lines.extend(traceback.format_list(frames))
    else:
        lines.append(OUTSIDE[1] + "\n")
    lines.append(exception_line(exc))
    text = "".join(lines).rstrip()
    return text if len(text) <= MAX_CHARS else text[: MAX_CHARS - 3] + "..."


def learner_line(exc: BaseException, learner_files: tuple[str, ...]) -> int | None:
    """The line of the solution's file (`learner_files[0]`) the error was raised at: the innermost
    of the learner's frames, as `learner_traceback` shows it last. None when that frame is in
    another of their files (a part of theirs, such as qwen/norm.py) or there is none."""
    frames = [f for f in traceback.extract_tb(_tb(exc)) if f.filename in learner_files]
    if not frames or frames[-1].filename != learner_files[0]:
        return None
    return frames[-1].lineno


def _tb(exc: BaseException) -> TracebackType | None:
    return exc.__traceback__
