"""The runner's frames as records (judge.core.frames): what a builder writes its parser reads back,
through the real encoder and stream reader, and a frame a forger could write is refused or
read as "not told", never taken on trust."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from judge.core.backend import Limits, Outcome
from judge.core.execution import interpret
from judge.core.frames import (
    AnyFrame,
    CaseFrame,
    CaseOutcome,
    Done,
    FrameError,
    Hello,
    Load,
    Replayed,
    ScratchFrame,
    ScratchRefFrame,
    ShownValue,
    parse_judgement_frame,
)
from judge.core.observations import encode
from judge.core.protocol import encode_frame, parse_stream
from judge.core.verdicts import Verdict

OBS, TENSORS = encode({"y": torch.arange(3.0), "n": 2})
LIMITS = Limits(startup_s=5, wall_s=5, cpu_s=10, memory_bytes=1 << 28, log_bytes=4096)

# Every kind, and every optional field of each set somewhere.
FRAMES: list[AnyFrame] = [
    Hello(1, "2.5.1+cpu", "3.11.9"),
    Hello(1),
    Load(0, "started"),
    Load(0, "ok", parts=("204", "205"), missing=("l2norm",)),
    Load(1, "ce", "SyntaxError: 第 3 行 line 3: invalid syntax", line=3),
    Load(0, "ce", missing=("f",)),
    Load(0, "ce", not_callable=("f",)),
    Load(0, "missing_part", "part qwen.norm (problem 204)", missing_part=("204", "qwen.norm")),
    Load(0, "error", "Traceback (your code only):\n...", line=7),
    CaseFrame(0, "c1", CaseOutcome("ok", 1.25, OBS)),
    CaseFrame(0, "c2", CaseOutcome("forbidden", 0.5, api="torch.nn.functional.rms_norm")),
    CaseFrame(1, "c3", CaseOutcome("error", 2.0, message="boom", line=12)),
    CaseFrame(0, "c4", CaseOutcome("memory", 3.0, message="MemoryError")),
    CaseFrame(0, "c5", CaseOutcome("error", message="missing entry point: g", missing_entry="g")),
    CaseFrame(0, "c6", CaseOutcome("error", message="a tensor ...", unreturnable="torch.uint16")),
    CaseFrame(0, "c7", CaseOutcome("error", message="ImportError", missing_part=("901", "course.double"))),
    Done(),
    ScratchFrame(
        0, "ok", 4.5, value=ShownValue("torch.Tensor", "tensor([0.])", (1,), "torch.float32"), obs=OBS
    ),
    ScratchFrame(0, "ce", message="SyntaxError: x", line=2, obs=OBS),
    ScratchFrame(0, "forbidden", 1.0, message="", api="torch.softmax", skipped=3, obs=OBS),
    ScratchFrame(
        0, "error", 1.0, message="Traceback", line=1, value=ShownValue("builtins.int", "3"), obs=OBS
    ),
    ScratchRefFrame(0, OBS),
]
PARSERS = {
    Hello: Hello.parse,
    Load: Load.parse,
    CaseFrame: CaseFrame.parse,
    Done: Done.parse,
    ScratchFrame: ScratchFrame.parse,
    ScratchRefFrame: ScratchRefFrame.parse,
}


@pytest.mark.parametrize("frame", FRAMES, ids=lambda f: type(f).__name__)
def test_every_kind_reads_back_as_it_was_built(frame: AnyFrame) -> None:
    stream = parse_stream(encode_frame(frame.to_head(), TENSORS))
    assert stream.error is None and len(stream.frames) == 1
    assert PARSERS[type(frame)](stream.frames[0].head) == frame
    if not isinstance(frame, (ScratchFrame, ScratchRefFrame)):  # read apart, by judge.scratch
        assert parse_judgement_frame(stream.frames[0].head) == frame


@pytest.mark.parametrize(
    ("parse", "head", "why"),
    [
        (Hello.parse, {"kind": "hello", "protocol": "1"}, "protocol"),
        (Hello.parse, {"kind": "hello", "protocol": 1, "torch": "x" * 1000}, "version"),
        (Hello.parse, {"kind": "hello", "protocol": True}, "protocol"),
        (Load.parse, {"kind": "load", "solution": "0", "status": "ok"}, "solution"),
        (Load.parse, {"kind": "load", "solution": -1, "status": "ok"}, "solution"),
        (CaseFrame.parse, {"kind": "case", "solution": 0, "status": "ok"}, "case name"),
        (CaseFrame.parse, {"kind": "case", "solution": 0, "case": "c", "status": "fine"}, "status"),
        (CaseFrame.parse, {"kind": "case", "solution": False, "case": "c", "status": "ok"}, "solution"),
        (Done.parse, {"kind": "hello"}, "done"),
        (ScratchFrame.parse, {"kind": "scratch", "solution": 0, "status": "crashed"}, "status"),
        (ScratchFrame.parse, {"kind": "scratch", "status": "ok"}, "solution"),
        (ScratchRefFrame.parse, {"kind": "scratch_ref", "solution": [0]}, "solution"),
        (parse_judgement_frame, {"kind": "scratch", "solution": 0}, "unknown frame kind"),
    ],
)
def test_a_malformed_frame_of_each_kind_is_refused(parse: Any, head: dict[str, Any], why: str) -> None:
    with pytest.raises(FrameError, match=why):
        parse(head)


def test_what_a_forger_gets_wrong_elsewhere_is_not_told() -> None:
    """Fields the judgement does not hang on fall back to their default, never through."""
    load = Load.parse(
        {
            "kind": "load",
            "solution": 0,
            "status": 5,
            "message": ["x"],
            "line": 10**9,
            "part": "../etc",
            "module": "qwen.norm",
            "parts": ["204", "x", 7],
            "missing": ["g", "secret-1"],
        }
    )
    assert load == Load(0, "?", parts=("204",), missing=("g",))
    case = CaseOutcome.parse(
        {"status": "error", "time_ms": 10**400, "line": True, "missing_entry": "a b", "unreturnable": "<b>"}
    )
    assert case == CaseOutcome("error")
    value = ShownValue.parse({"repr": "r", "type": 3, "shape": [1, "2"], "dtype": 4})
    assert value == ShownValue("3", "r")
    assert ShownValue.parse({"type": "t"}) is None


def test_replayed_results_read_back_and_a_malformed_one_is_an_error() -> None:
    for item in (
        Replayed("ok", 3),
        Replayed("state", unknown=("w",), lacking=("b",)),
        Replayed("error", message="e"),
    ):
        assert Replayed.from_tree(item.to_tree()) == item
    assert Replayed.from_tree([1]).status == "error"
    assert Replayed.from_tree({"status": "?"}).status == "error"


def test_the_judge_takes_the_line_and_the_missing_part_of_a_case() -> None:
    frames = [
        Hello(1),
        Load(0, "started"),
        Load(0, "ok"),
        CaseFrame(0, "a", CaseOutcome("error", 1.0, message="boom", line=4)),
        CaseFrame(
            0, "b", CaseOutcome("error", 1.0, message="no part", missing_part=("901", "course.double"))
        ),
        Done(),
    ]
    data = b"".join(encode_frame(f.to_head()) for f in frames)
    run = interpret(parse_stream(data), Outcome(data, b"", 0, None, 0.1), 1, LIMITS, ["a", "b"], ["f"])
    assert run.stop is None and run.hello == Hello(1)
    cases = run.solutions[0].cases
    assert (cases["a"].line, cases["a"].missing_part) == (4, None)
    assert (cases["b"].line, cases["b"].missing_part) == (None, ("901", "course.double"))


def test_a_load_error_keeps_its_line() -> None:
    frames = [Hello(1), Load(0, "started"), Load(0, "ce", "SyntaxError", line=2), Done()]
    data = b"".join(encode_frame(f.to_head()) for f in frames)
    run = interpret(parse_stream(data), Outcome(data, b"", 0, None, 0.1), 1, LIMITS, ["a"])
    assert run.stop is None
    assert (run.solutions[0].load_status, run.solutions[0].load_line) == ("ce", 2)


def test_a_malformed_frame_in_a_stream_is_a_damaged_stream() -> None:
    """As before the records: the frames before it count, the run is the learner's RE."""
    frames = [
        encode_frame(Hello(1).to_head()),
        encode_frame(Load(0, "started").to_head()),
        encode_frame({"kind": "case", "solution": 0, "case": "a", "status": "fine"}),
        encode_frame(Done().to_head()),
    ]
    data = b"".join(frames)
    run = interpret(parse_stream(data), Outcome(data, b"", 0, None, 0.1), 1, LIMITS, ["a"])
    assert run.stop is not None and run.stop.verdict == Verdict.RE
    assert "unknown case status 'fine'" in run.stop.text.en
