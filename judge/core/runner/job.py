"""The job the judge sends to the runner on stdin: code to load and cases to run. No expected values.

Besides the solutions, a job carries the parts they may import (other problems' solutions,
as modules of the course package `qwen/`) and the package's data files the cases read (a
checkpoint, say): everything the code needs travels inside the sandboxed job.

On the wire a job is one line of JSON, then the data files' raw bytes one after the other
(the JSON gives each one's length). Problem 217's checkpoint is 780 KB: as base64 inside the
JSON it cost every job of a Submit (two of them) its encoding and JSON writing in the judge,
a third more bytes through the sandbox's stream, and the JSON parsing and decoding in the
runner, about 10 ms a job on this machine.
"""

from __future__ import annotations

import base64
import functools
import importlib.util
import json
import marshal
import types
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from judge.core.protocol import PROTOCOL_VERSION

LEARNER_FILE = "solution.py"
MAX_JOB_BYTES = 16 * 1024 * 1024
CASES_FILE = "cases.py"
# How cases.py is compiled, wherever that happens: as before in the runner, whose module has
# `from __future__ import annotations` and passed it on.
_CASES_FLAGS = annotations.compiler_flag


@dataclass(frozen=True)
class SolutionSource:
    name: str  # "solution" for a learner; "reference", "wrong/bf16_stats", ... in trusted runs
    source: str
    filename: str = LEARNER_FILE


@dataclass(frozen=True)
class PartSource:
    """Another problem's solution, importable as `module` (e.g. qwen.norm) by the solutions.

    `source` None: the learner has not solved that problem yet; importing it fails with a
    message naming the problem. `origin` says whose code it is: "reference" (the package's,
    for authors and validation), "learner" (their accepted submission or local file),
    "file" (given on the command line) or "missing"."""

    problem: str
    module: str
    source: str | None
    origin: str = "reference"

    @property
    def filename(self) -> str:
        """Where tracebacks say the code is: qwen/norm.py, as in the course's file tree."""
        return self.module.replace(".", "/") + ".py"


@dataclass(frozen=True)
class RunnerJob:
    problem: str
    entry_points: list[str]
    cases_source: str
    case_names: list[str]
    solutions: list[SolutionSource]
    forbidden: list[str] = field(default_factory=list)
    parts: list[PartSource] = field(default_factory=list)
    # Package files the cases read (judge.core.casekit.data_path): relative path -> their bytes,
    # sent raw after the JSON.
    data: dict[str, bytes] = field(default_factory=dict)
    threads: int = 1
    protocol: int = PROTOCOL_VERSION
    # cases.py compiled by the judge (the author's code, which the judge imports itself):
    # base64 of the interpreter's magic number and the marshalled code. A runner on the same
    # Python version loads it instead of compiling the file again (3 ms a job); any other
    # compiles `cases_source`.
    cases_code: str = ""
    # The scratch cell (judge.core.runner.scratch): {"role": "learner", "snippet": ...} runs the
    # snippet after the solution instead of cases; {"role": "reference", "calls", "blob"}
    # replays recorded calls on the reference. None for a judgement.
    scratch: dict[str, Any] | None = None
    # The public cases' job of a judgement: the runner records what each case drew from its Rng
    # (judge.core.runner.inputs) for the learner to read. Never set for a job with hidden cases.
    record_inputs: bool = False

    def to_bytes(self) -> bytes:
        """The JSON on one line (JSON escapes every newline inside its strings) and a newline,
        then the raw bytes of each data file, in the order of `data`; in the JSON, a file is its
        length."""
        head = asdict(replace(self, data={}))
        head["data"] = {rel: len(content) for rel, content in self.data.items()}
        line = json.dumps(head, ensure_ascii=False).encode("utf-8")
        return b"".join([line, b"\n", *self.data.values()])

    @classmethod
    def from_bytes(cls, data: bytes) -> RunnerJob:
        line, _, tail = data.partition(b"\n")
        raw: dict[str, Any] = json.loads(line.decode("utf-8"))
        if raw.get("protocol") != PROTOCOL_VERSION:
            raise ValueError(f"runner speaks protocol {PROTOCOL_VERSION}, job has {raw.get('protocol')!r}")
        raw["solutions"] = [SolutionSource(**s) for s in raw["solutions"]]
        raw["parts"] = [PartSource(**p) for p in raw.get("parts", [])]
        raw["data"] = _data_files(raw.get("data", {}), memoryview(tail))
        return cls(**raw)


def _data_files(declared: dict[str, Any], tail: memoryview) -> dict[str, bytes]:
    """The data files of a job, each one's bytes cut from the tail in order."""
    files: dict[str, bytes] = {}
    at = 0
    for rel, size in declared.items():
        if not isinstance(size, int) or isinstance(size, bool) or size < 0 or at + size > len(tail):
            raise ValueError(f"job data file {rel!r}: a length that the job's bytes do not hold")
        files[rel] = bytes(tail[at : at + size])
        at += size
    if at != len(tail):
        raise ValueError("the job's bytes go on after its last data file")
    return files


def compile_cases(source: str) -> types.CodeType:
    code: types.CodeType = compile(source, CASES_FILE, "exec", flags=_CASES_FLAGS, dont_inherit=True)
    return code


@functools.lru_cache(maxsize=64)
def marshalled_cases(source: str) -> str:
    """`cases_code` for a cases.py: compiled once per text in a judging process."""
    raw = importlib.util.MAGIC_NUMBER + marshal.dumps(compile_cases(source))
    return base64.b64encode(raw).decode("ascii")


def load_cases_code(job: RunnerJob) -> types.CodeType:
    """The job's cases.py as code: its compiled form where this interpreter can load that."""
    magic = importlib.util.MAGIC_NUMBER
    if job.cases_code:
        raw = base64.b64decode(job.cases_code)
        if raw[: len(magic)] == magic:
            code = marshal.loads(raw[len(magic) :])
            if isinstance(code, types.CodeType):
                return code
    return compile_cases(job.cases_source)
