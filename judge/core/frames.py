"""The runner's frames as records: one frozen record per kind, one builder and one parser each.

The runner builds a frame's head with the record's `to_head()` (judge.core.protocol.encode_frame
writes it, with the tensors beside it); the judge reads it back with the kind's `parse(head)`.
Nothing else builds or reads a frame head by its keys, so the two ends cannot drift apart.

Kinds, in the order the runner writes them: `Hello` (ready, torch imported), then per solution
a `Load` of status "started" (its code is about to run) and a `Load` with the outcome, then a
`CaseFrame` per case (a judgement) or one `ScratchFrame` / `ScratchRefFrame` (the scratch cell,
judge.core.runner.scratch); then `Done`.

The stream is untrusted: learner code shares the runner's process and can write frames of its
own. So every parser checks every field's type and size. What only a forged frame can get wrong
and the judgement depends on (which solution, which case, what status) makes the frame
unreadable: `FrameError`, and the judge reads a damaged stream. Anything else that is
malformed is dropped to the field's default (a message that is not a string is no message), as
each parser says. Nothing a parser returns needs checking again; what a field means for the
judgement (an entry point believed only when the load frame declared it missing, say) is the
judge's to decide (judge.core.execution).

Fields added since protocol 1 (`line` of a load or case error, the missing `part` of a case)
are optional: a stream written before them reads as "not told", so no version bump was needed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeGuard

from judge.core.protocol import ProtocolError

PROBLEM_ID = re.compile(r"[0-9]{3,5}")
MODULE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,40}(\.[A-Za-z_][A-Za-z0-9_]{0,40}){0,4}")
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
# What the runner says a returned tensor is when the stream cannot carry it (a dtype, a layout).
UNRETURNABLE = re.compile(r"[a-z][a-z0-9_.]{0,47}")

MAX_MESSAGE = 8000
MAX_STATUS = 40
MAX_API = 200
MAX_NAMES = 64  # parts imported, entry points missing
MAX_LINE = 100_000
MAX_REPR = 4000  # the scratch cell's shown value
MAX_TYPE = 200
MAX_DTYPE = 40
MAX_DIMS = 16
MAX_VERSION = 100  # torch's and Python's version strings in "hello"

CaseStatus = Literal["ok", "error", "memory", "forbidden"]
CASE_STATUSES: tuple[CaseStatus, ...] = ("ok", "error", "memory", "forbidden")
ScratchStatus = Literal["ok", "error", "memory", "forbidden", "ce"]
SCRATCH_STATUSES: tuple[ScratchStatus, ...] = ("ok", "error", "memory", "forbidden", "ce")
NO_SOLUTION = "a frame names a solution that the job does not hold"


class FrameError(ProtocolError):
    """A frame head that cannot be read as its kind: the stream is damaged."""


# Field readers: each takes an untrusted JSON value and gives the field's value or its default.


def _is_int(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _text(value: Any, limit: int = MAX_MESSAGE) -> str:
    return value[:limit] if isinstance(value, str) else ""


def _time_ms(value: Any) -> float:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value < 1e9:
        return float(value)
    return 0.0


def _line(value: Any) -> int | None:
    """A line number of the learner's file; anything else is "not told"."""
    return value if _is_int(value) and 0 < value < MAX_LINE else None


def _names(value: Any, pattern: re.Pattern[str]) -> tuple[str, ...]:
    if not isinstance(value, list):
        return ()
    return tuple(n for n in value[:MAX_NAMES] if isinstance(n, str) and pattern.fullmatch(n))


def _part(problem: Any, module: Any) -> tuple[str, str] | None:
    """(problem id, module) of a missing part: only a well-formed id and module name are taken."""
    if (
        isinstance(problem, str)
        and isinstance(module, str)
        and PROBLEM_ID.fullmatch(problem)
        and MODULE_NAME.fullmatch(module)
    ):
        return problem, module
    return None


def _solution(head: Mapping[str, Any]) -> int:
    """The index of the job's solution a frame is about (whether the job holds it is the judge's
    to check: the parser does not know the job)."""
    index = head.get("solution")
    if not _is_int(index) or index < 0:
        raise FrameError(NO_SOLUTION)
    return int(index)


def _expect(head: Mapping[str, Any], kind: str) -> None:
    if head.get("kind") != kind:
        raise FrameError(f"not a {kind} frame")


def _put_part(head: dict[str, Any], part: tuple[str, str] | None) -> None:
    if part is not None:
        head["part"], head["module"] = part


@dataclass(frozen=True)
class Hello:
    """The runner is ready (torch imported, warmed up); the job's clock starts after it."""

    protocol: int
    torch: str | None = None
    python: str | None = None

    def to_head(self) -> dict[str, Any]:
        return {"kind": "hello", "protocol": self.protocol, "torch": self.torch, "python": self.python}

    @classmethod
    def parse(cls, head: Mapping[str, Any]) -> Hello:
        """Rejected: a protocol that is not a number, versions that are not short strings."""
        _expect(head, "hello")
        protocol, torch, python = head.get("protocol"), head.get("torch"), head.get("python")
        if not _is_int(protocol):
            raise FrameError("hello frame without a protocol number")
        for version in (torch, python):
            if version is not None and not (isinstance(version, str) and len(version) <= MAX_VERSION):
                raise FrameError("hello frame with a malformed version")
        return cls(int(protocol), torch, python)


@dataclass(frozen=True)
class Load:
    """A solution's load: "started" before its code runs, then how loading it went.

    `status`: started, ok, ce, error, memory or missing_part (`missing_part` then names the part
    as (problem id, module)). `line`: the line of the solution's file a compile or import error
    points at. `parts`: the part problems it imported (ok). `missing`: entry points it does not
    define (all of them for a "ce" that is not this problem's file; some for an "ok").
    `not_callable`: entry points it defines as something that cannot be called (a "ce")."""

    solution: int
    status: str
    message: str = ""
    line: int | None = None
    missing_part: tuple[str, str] | None = None
    parts: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    not_callable: tuple[str, ...] = ()

    def to_head(self) -> dict[str, Any]:
        head: dict[str, Any] = {"kind": "load", "solution": self.solution, "status": self.status}
        if self.not_callable:
            head["not_callable"] = list(self.not_callable)
        if self.line is not None:
            head["line"] = self.line
        _put_part(head, self.missing_part)
        if self.status == "ok" or self.parts:
            head["parts"] = list(self.parts)
        if self.status == "ok" or self.missing:
            head["missing"] = list(self.missing)
        if self.message:
            head["message"] = self.message
        return head

    @classmethod
    def parse(cls, head: Mapping[str, Any]) -> Load:
        """Rejected: no solution index. A status that is not a string is "?" (the judge knows no
        such status); names that are not well formed are dropped."""
        _expect(head, "load")
        solution = _solution(head)
        status = head.get("status")
        return cls(
            solution,
            status[:MAX_STATUS] if isinstance(status, str) else "?",
            _text(head.get("message")),
            _line(head.get("line")),
            _part(head.get("part"), head.get("module")),
            _names(head.get("parts"), PROBLEM_ID),
            _names(head.get("missing"), IDENTIFIER),
            _names(head.get("not_callable"), IDENTIFIER),
        )


@dataclass(frozen=True)
class CaseOutcome:
    """What one case did: the body of a "case" frame, and of a case the practice kit stores.

    `obs`: the observation tree's manifest (judge.core.observations.encode), its tensors beside
    the head; "ok" only. `api`: the forbidden call ("forbidden"). For an "error": `missing_entry`,
    the entry point it reached for that the solution lacks; `unreturnable`, the dtype or layout of
    a returned tensor the stream cannot carry; `missing_part`, the part it imported that nobody
    provided; `line`, the line of the solution's file the error was raised at (its innermost own
    frame; not told when that is in another file, a part of theirs say). `message` is the
    runner's: a traceback, an error line."""

    status: CaseStatus
    time_ms: float = 0.0
    obs: Any = None
    message: str = ""
    api: str | None = None
    missing_entry: str | None = None
    unreturnable: str | None = None
    line: int | None = None
    missing_part: tuple[str, str] | None = None
    # What the case drew from its Rng (judge.core.runner.inputs): recorded in the public cases'
    # job only. Each {"name", "shape", "dtype"} and, for a small draw, "values".
    inputs: tuple[dict[str, Any], ...] = ()

    def to_head(self) -> dict[str, Any]:
        head: dict[str, Any] = {"status": self.status, "time_ms": self.time_ms}
        if self.inputs:
            head["inputs"] = list(self.inputs)
        if self.status == "ok":
            head["obs"] = self.obs
        if self.api is not None:
            head["api"] = self.api
        if self.missing_entry is not None:
            head["missing_entry"] = self.missing_entry
        if self.unreturnable is not None:
            head["unreturnable"] = self.unreturnable
        if self.line is not None:
            head["line"] = self.line
        _put_part(head, self.missing_part)
        if self.message:
            head["message"] = self.message
        return head

    @classmethod
    def parse(cls, head: Mapping[str, Any]) -> CaseOutcome:
        """Rejected: a status the judge does not know. A time out of range is 0; a name (entry
        point, dtype, part) that is not well formed, a line out of range, are not told."""
        status = head.get("status")
        if status not in CASE_STATUSES:
            kind = type(status).__name__
            shown = repr(status[:MAX_STATUS]) if isinstance(status, str) else f"of type {kind}"
            raise FrameError(f"unknown case status {shown}")
        api, entry, what = head.get("api"), head.get("missing_entry"), head.get("unreturnable")
        return cls(
            status,
            _time_ms(head.get("time_ms")),
            head.get("obs") if status == "ok" else None,
            _text(head.get("message")),
            api[:MAX_API] if isinstance(api, str) else None,
            entry if isinstance(entry, str) and IDENTIFIER.fullmatch(entry) else None,
            what if isinstance(what, str) and UNRETURNABLE.fullmatch(what) else None,
            _line(head.get("line")),
            _part(head.get("part"), head.get("module")),
            _inputs(head.get("inputs")),
        )


MAX_INPUTS = 12
MAX_INPUT_VALUES = 16
INPUT_NAME = re.compile(r"[^\x00-\x1f]{1,64}")


def _input_value(v: Any) -> bool:
    """A number, or a short word for NaN and inf."""
    return isinstance(v, (int, float)) or (isinstance(v, str) and len(v) <= 8)


def _inputs(value: Any) -> tuple[dict[str, Any], ...]:
    """A case's recorded inputs; an entry that is not well formed is dropped (they are shown to
    the learner whose code wrote the stream, never judged)."""
    if not isinstance(value, list):
        return ()
    out: list[dict[str, Any]] = []
    for raw in value[:MAX_INPUTS]:
        if not isinstance(raw, dict):
            continue
        name, shape, dtype = raw.get("name"), raw.get("shape"), raw.get("dtype")
        if not (isinstance(name, str) and INPUT_NAME.fullmatch(name)):
            continue
        if not (isinstance(shape, list) and len(shape) <= MAX_DIMS and all(_is_int(n) for n in shape)):
            continue
        if not (isinstance(dtype, str) and UNRETURNABLE.fullmatch(dtype)):
            continue
        entry: dict[str, Any] = {"name": name, "shape": list(shape), "dtype": dtype}
        values = raw.get("values")
        if (
            isinstance(values, list)
            and len(values) <= MAX_INPUT_VALUES
            and all(_input_value(v) for v in values)
        ):
            entry["values"] = list(values)
        out.append(entry)
    return tuple(out)


@dataclass(frozen=True)
class CaseFrame:
    """One case of one solution."""

    solution: int
    case: str
    outcome: CaseOutcome

    def to_head(self) -> dict[str, Any]:
        return {"kind": "case", "solution": self.solution, "case": self.case, **self.outcome.to_head()}

    @classmethod
    def parse(cls, head: Mapping[str, Any]) -> CaseFrame:
        """Rejected: no solution index, no case name, or an outcome that cannot be read."""
        _expect(head, "case")
        solution = _solution(head)
        name = head.get("case")
        if not isinstance(name, str):
            raise FrameError("case frame without a case name")
        try:
            outcome = CaseOutcome.parse(head)
        except FrameError as exc:
            raise FrameError(f"case {name[:100]}: {exc}") from None
        return cls(solution, name, outcome)


@dataclass(frozen=True)
class Done:
    """The runner finished: every solution's load and every loaded solution's cases came first."""

    def to_head(self) -> dict[str, Any]:
        return {"kind": "done"}

    @classmethod
    def parse(cls, head: Mapping[str, Any]) -> Done:
        _expect(head, "done")
        return cls()


@dataclass(frozen=True)
class ShownValue:
    """The scratch snippet's last expression as the learner reads it: its type, torch's own repr
    (which summarises a large tensor) and, for a tensor, its shape and dtype."""

    type: str
    repr: str
    shape: tuple[int, ...] | None = None
    dtype: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type, "repr": self.repr}
        if self.shape is not None:
            out["shape"] = list(self.shape)
        if self.dtype is not None:
            out["dtype"] = self.dtype
        return out

    @classmethod
    def parse(cls, raw: Any) -> ShownValue | None:
        """None unless it has a repr; other fields that are not well formed are not told."""
        if not isinstance(raw, dict) or not isinstance(raw.get("repr"), str):
            return None
        shape, dtype = raw.get("shape"), raw.get("dtype")
        dims = shape[:MAX_DIMS] if isinstance(shape, list) else None
        return cls(
            str(raw.get("type", ""))[:MAX_TYPE],
            raw["repr"][:MAX_REPR],
            tuple(dims) if dims is not None and all(_is_int(n) for n in dims) else None,
            dtype[:MAX_DTYPE] if isinstance(dtype, str) else None,
        )


@dataclass(frozen=True)
class ScratchFrame:
    """The learner's scratch run: its snippet's status, its last value, and the calls it made to
    the problem's entry points (`obs`: an observation tree's manifest, a list of recorded calls;
    `skipped`: calls recorded beyond those). `line`: the snippet's line an error points at."""

    solution: int
    status: ScratchStatus
    time_ms: float = 0.0
    message: str = ""
    api: str | None = None
    line: int | None = None
    value: ShownValue | None = None
    skipped: int = 0
    obs: Any = None

    def to_head(self) -> dict[str, Any]:
        head: dict[str, Any] = {"kind": "scratch", "solution": self.solution, "status": self.status}
        if self.api is not None:
            head["api"] = self.api
        if self.line is not None:
            head["line"] = self.line
        if self.message:
            head["message"] = self.message
        head["time_ms"] = self.time_ms
        if self.value is not None:
            head["value"] = self.value.to_dict()
        head["skipped"] = self.skipped
        head["obs"] = self.obs
        return head

    @classmethod
    def parse(cls, head: Mapping[str, Any]) -> ScratchFrame:
        """Rejected: no solution index, or a status the judge does not know."""
        _expect(head, "scratch")
        solution = _solution(head)
        status = head.get("status")
        if status not in SCRATCH_STATUSES:
            raise FrameError("unknown scratch status")
        api, skipped = head.get("api"), head.get("skipped", 0)
        return cls(
            solution,
            status,
            _time_ms(head.get("time_ms")),
            _text(head.get("message")),
            api[:MAX_API] if isinstance(api, str) else None,
            _line(head.get("line")),
            ShownValue.parse(head.get("value")),
            skipped if _is_int(skipped) and 0 <= skipped < 10**9 else 0,
            head.get("obs"),
        )


@dataclass(frozen=True)
class Replayed:
    """What the reference gave for one admitted call of the scratch cell, an item of the
    "scratch_ref" frame's observation tree: "ok" and what it returned (`out`), "state" (the
    learner's module's parameters are named otherwise: `unknown` and `lacking` names), or
    "error" and the exception's line."""

    status: Literal["ok", "state", "error"]
    out: Any = None
    message: str = ""
    unknown: tuple[str, ...] = ()
    lacking: tuple[str, ...] = ()

    def to_tree(self) -> dict[str, Any]:
        if self.status == "ok":
            return {"status": "ok", "out": self.out}
        if self.status == "state":
            return {"status": "state", "unknown": list(self.unknown), "lacking": list(self.lacking)}
        return {"status": "error", "message": self.message}

    @classmethod
    def from_tree(cls, tree: Any) -> Replayed:
        """An item that cannot be read is an error of that call (the run is trusted: it does not
        happen, but it must not break the learner's result)."""
        if not isinstance(tree, dict):
            return cls("error", message="a malformed result")
        status = tree.get("status")
        if status == "ok":
            return cls("ok", tree.get("out"))
        if status == "state":
            return cls("state", unknown=_strings(tree.get("unknown")), lacking=_strings(tree.get("lacking")))
        if status == "error":
            return cls("error", message=_text(tree.get("message")))
        return cls("error", message="a malformed result")


def _strings(value: Any) -> tuple[str, ...]:
    return tuple(str(v) for v in value[:MAX_NAMES]) if isinstance(value, list) else ()


@dataclass(frozen=True)
class ScratchRefFrame:
    """The reference's replay of the admitted calls: `obs` is the manifest of a list of
    `Replayed` trees, one per call, in order."""

    solution: int
    obs: Any = None

    def to_head(self) -> dict[str, Any]:
        return {"kind": "scratch_ref", "solution": self.solution, "status": "ok", "obs": self.obs}

    @classmethod
    def parse(cls, head: Mapping[str, Any]) -> ScratchRefFrame:
        """Rejected: no solution index."""
        _expect(head, "scratch_ref")
        return cls(_solution(head), head.get("obs"))


# Every frame the runner writes.
AnyFrame = Hello | Load | CaseFrame | Done | ScratchFrame | ScratchRefFrame
# The frames of a judgement (the scratch cell's are read apart, by judge.scratch).
JudgementFrame = Hello | Load | CaseFrame | Done
_JUDGEMENT: dict[str, Callable[[Mapping[str, Any]], JudgementFrame]] = {
    "hello": Hello.parse,
    "load": Load.parse,
    "case": CaseFrame.parse,
    "done": Done.parse,
}


def parse_judgement_frame(head: Mapping[str, Any]) -> JudgementFrame:
    """A frame of a judgement's stream as its record; FrameError for any other kind."""
    kind = head.get("kind")
    parse = _JUDGEMENT.get(kind) if isinstance(kind, str) else None
    if parse is None:
        shown = kind[:40] if isinstance(kind, str) else ""
        raise FrameError(f"unknown frame kind {shown!r}")
    return parse(head)
