"""Fuzzing the judge's readers of learner output: whatever bytes a job writes into its result
stream, parsing and interpreting them ends in frames or a "damaged stream" stop (RE), never
in an exception that would make the judge retry the job and end SE.

Learner code shares the runner's process, so it can find the runner's result descriptor and
write frames of its own: integers of thousands of digits, 10**400 where a float is read, a
safetensors header with enormous shapes. These are the cases the strategies aim at.
"""

from __future__ import annotations

import json
import struct
from typing import Any

import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from judge.core.backend import Limits, Outcome
from judge.core.execution import interpret
from judge.core.protocol import MAGIC, StreamLimits, encode_frame, parse_safetensors, parse_stream
from judge.core.verdicts import Verdict

LIMITS = StreamLimits(max_bytes=1 << 20, max_elements_per_frame=4096, max_elements_total=8192)
RUN_LIMITS = Limits(startup_s=5, wall_s=5, cpu_s=10, memory_bytes=1 << 28, log_bytes=4096)
FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Integers a JSON reader chokes on in different ways: past float's range, past the 4300
# digits Python parses, negative, huge but in range for a shape test.
awkward_ints = st.one_of(
    st.integers(-(2**70), 2**70),
    st.sampled_from([10**400, -(10**400), 2**40, 2**63, 2**64, -1, 0]),
    st.integers(min_value=300, max_value=400).map(lambda n: 10**n),
)
# Raw JSON number text (10**5000 is refused by int(), so it must be written as text).
huge_number_text = st.sampled_from(["1" + "0" * 5000, "-" + "9" * 4400, "1e400", "-1e400", "1" * 4301])
json_leaves = st.one_of(
    st.none(),
    st.booleans(),
    awkward_ints,
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
    st.sampled_from(["nan", "inf", "-inf", "torch.float32", "torch.nonsense", "tensor", "ok"]),
)
json_values = st.recursive(
    json_leaves,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12,
)


def _raw_frame(head: bytes, blob: bytes = b"") -> bytes:
    return struct.pack(">4sIQ", MAGIC, len(head), len(blob)) + head + blob


def _outcome(result: bytes) -> Outcome:
    return Outcome(result=result, log=b"", exit_code=0, signal=None, wall_s=0.1, ready_s=0.05)


def _judge_reads(data: bytes) -> None:
    """What the judge does with a learner's result bytes; must not raise."""
    parsed = parse_stream(data, LIMITS)
    run = interpret(parsed, _outcome(data), 1, RUN_LIMITS)
    if parsed.error is not None:
        assert run.stop is not None and run.stop.verdict in (Verdict.RE, Verdict.SE)


@st.composite
def case_heads(draw: st.DrawFn) -> bytes:
    """A case frame head as a forger would write it: right keys, wrong values."""
    head: dict[str, Any] = {"kind": draw(st.sampled_from(["case", "load", "hello", "done", "case"]))}
    head["solution"] = draw(st.one_of(st.just(0), awkward_ints, json_values))
    head["case"] = draw(st.one_of(st.just("c1"), json_values))
    head["status"] = draw(st.one_of(st.sampled_from(["ok", "error", "memory", "forbidden"]), json_values))
    head["time_ms"] = draw(st.one_of(awkward_ints, json_values))
    head["message"] = draw(json_values)
    head["api"] = draw(json_values)
    kind = draw(st.sampled_from(["tensor", "int", "float", "str", "dtype", "list", "dict", "other", "x"]))
    head["obs"] = draw(st.one_of(st.just({"t": kind, "v": draw(json_values), "k": "0"}), json_values))
    text = json.dumps(head)
    # Some numbers only exist as text: splice one in where a number was.
    if draw(st.booleans()):
        text = text.replace('"time_ms": ', '"time_ms": ' + draw(huge_number_text) + ', "was": ', 1)
    return text.encode()


@st.composite
def safetensors_blobs(draw: st.DrawFn) -> bytes:
    header: dict[str, Any] = {}
    for i in range(draw(st.integers(0, 3))):
        shape = draw(st.lists(st.one_of(awkward_ints, st.integers(0, 4)), max_size=17))
        if draw(st.booleans()):
            shape = [0, 2**39, 2**39, 2**39]  # no bytes, but an overflowing size
        start = draw(st.one_of(st.just(0), awkward_ints))
        end = draw(st.one_of(st.integers(0, 64), awkward_ints))
        header[str(i)] = {
            "dtype": draw(st.one_of(st.sampled_from(["F32", "BF16", "BOOL", "I64", "Q4"]), json_values)),
            "shape": draw(st.one_of(st.just(shape), json_values)),
            "data_offsets": draw(st.one_of(st.just([start, end]), json_values)),
        }
    text = json.dumps(header).encode()
    if draw(st.booleans()):
        text = text.replace(
            b'"data_offsets": [', b'"data_offsets": [' + draw(huge_number_text).encode() + b", ", 1
        )
    data = draw(st.binary(max_size=64))
    return struct.pack("<Q", len(text)) + text + data


@FUZZ
@given(st.binary(max_size=512))
def test_any_bytes(data: bytes) -> None:
    _judge_reads(data)


@FUZZ
@given(st.binary(max_size=256))
def test_any_bytes_after_a_valid_prefix(tail: bytes) -> None:
    _judge_reads(encode_frame({"kind": "hello", "protocol": 1}) + MAGIC + tail)


@FUZZ
@given(case_heads(), st.one_of(st.just(b""), safetensors_blobs()))
def test_forged_frames(head: bytes, blob: bytes) -> None:
    hello = encode_frame({"kind": "hello", "protocol": 1})
    started = encode_frame({"kind": "load", "solution": 0, "status": "started"})
    _judge_reads(hello + started + _raw_frame(head, blob) + encode_frame({"kind": "done"}))


@FUZZ
@given(safetensors_blobs())
def test_safetensors_reader(blob: bytes) -> None:
    from judge.core.protocol import ProtocolError

    try:
        tensors, elements = parse_safetensors(blob, LIMITS)
    except ProtocolError:
        return
    assert elements <= LIMITS.max_elements_per_frame
    assert all(isinstance(t, torch.Tensor) for t in tensors.values())


def test_the_reported_attacks_end_in_a_plain_damaged_stream() -> None:
    """The three frames an attack round wrote: each is RE with a message free of Python errors."""
    hello = encode_frame({"kind": "hello", "protocol": 1})
    started = encode_frame({"kind": "load", "solution": 0, "status": "started"})
    digits = (
        b'{"kind": "case", "solution": 0, "case": "c1", "status": "ok", "time_ms": 1' + b"0" * 5000 + b"}"
    )
    overflow = json.dumps(
        {
            "kind": "case",
            "solution": 0,
            "case": "c1",
            "status": "ok",
            "time_ms": 10**400,
            "obs": {"t": "float", "v": 10**400},
        }
    ).encode()
    header = json.dumps(
        {"0": {"dtype": "F32", "shape": [0, 2**39, 2**39, 2**39], "data_offsets": [0, 0]}}
    ).encode()
    shapes = _raw_frame(
        json.dumps(
            {
                "kind": "case",
                "solution": 0,
                "case": "c1",
                "status": "ok",
                "time_ms": 1,
                "obs": {"t": "tensor", "k": "0"},
            }
        ).encode(),
        struct.pack("<Q", len(header)) + header,
    )
    for forged in (_raw_frame(digits), _raw_frame(overflow), shapes):
        data = hello + started + forged + encode_frame({"kind": "done"})
        run = interpret(parse_stream(data), _outcome(data), 1, RUN_LIMITS)
        assert run.stop is not None and run.stop.verdict == Verdict.RE
        assert "damaged" in run.stop.text.en
        for python_error in ("ValueError", "OverflowError", "RuntimeError", "Traceback", "Exceeds the limit"):
            assert python_error not in run.stop.text.en and python_error not in run.stop.text.zh
