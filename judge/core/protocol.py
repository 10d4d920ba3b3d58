"""The runner protocol: frames of (JSON head, safetensors blob) over one byte stream.

The runner writes frames to a private copy of its original stdout; the learner's own
prints go to stderr. Each frame is

    b"JDG1" | u32 head length (big-endian) | u64 blob length (big-endian) | head | blob

where head is a UTF-8 JSON object and blob is empty or a safetensors file. The judge reads
the stream with hard limits and builds tensors only after it has checked the safetensors
header itself: dtype, shape, offsets, tensor count and element count. Nothing is unpickled.

Frame kinds, in order: "hello" (runner ready, torch imported), then per solution a "load"
frame of status "started" (its code is about to run), a "load" frame with the outcome of
loading it, and one "case" frame per case; then "done". What each head holds is a record of
judge.core.frames, which both ends build and parse the heads with; this module knows only
that a head is an object with a "kind".
"""

from __future__ import annotations

import ctypes
import itertools
import json
import math
import struct
import sys
from dataclasses import dataclass, field
from typing import Any

import torch

from judge.core.errors import JudgeError

MAGIC = b"JDG1"
PROTOCOL_VERSION = 1
_PREFIX = struct.Struct(">4sIQ")

# safetensors dtype names -> (torch dtype, bytes per element)
SAFETENSORS_DTYPES: dict[str, tuple[torch.dtype, int]] = {
    "F64": (torch.float64, 8),
    "F32": (torch.float32, 4),
    "F16": (torch.float16, 2),
    "BF16": (torch.bfloat16, 2),
    "I64": (torch.int64, 8),
    "I32": (torch.int32, 4),
    "I16": (torch.int16, 2),
    "I8": (torch.int8, 1),
    "U8": (torch.uint8, 1),
    "BOOL": (torch.bool, 1),
}


class ProtocolError(JudgeError, ValueError):
    """The stream is not a well-formed sequence of frames within the limits."""


@dataclass(frozen=True)
class StreamLimits:
    max_bytes: int = 64 * 1024 * 1024
    max_frames: int = 4096
    max_head_bytes: int = 1024 * 1024
    max_tensors_per_frame: int = 256
    max_elements_per_frame: int = 16 * 1024 * 1024
    max_elements_total: int = 32 * 1024 * 1024


@dataclass
class Frame:
    head: dict[str, Any]
    tensors: dict[str, torch.Tensor] = field(default_factory=dict)

    @property
    def kind(self) -> str:
        return str(self.head.get("kind", ""))


@dataclass
class ParsedStream:
    frames: list[Frame]
    # Set when the stream ends inside a frame or holds bytes that are not a frame.
    error: str | None = None


def encode_frame(head: dict[str, Any], tensors: dict[str, torch.Tensor] | None = None) -> bytes:
    """Serialise one frame. Used by the runner (inside the sandbox) and by tests."""
    head_bytes = json.dumps(head, ensure_ascii=False, allow_nan=False).encode("utf-8")
    blob = save_safetensors(tensors) if tensors else b""
    return _PREFIX.pack(MAGIC, len(head_bytes), len(blob)) + head_bytes + blob


# The safetensors format, read and written with torch alone: the practice kit runs where only
# torch is installed. The layout is the standard one (tests load it with the safetensors
# package both ways): an 8-byte little-endian header size, a JSON header of
# {name: {dtype, shape, data_offsets}}, then the little-endian bytes of each tensor.
_DTYPE_NAMES = {dtype: name for name, (dtype, _) in SAFETENSORS_DTYPES.items()}


def unsendable(t: torch.Tensor) -> str | None:
    """Why the stream cannot carry `t`: "nested", its layout ("sparse_coo", ...) or its dtype
    ("torch.float8_e4m3fn", "torch.uint16", "torch.complex64", ...); None when it can.

    What a case returns is the learner's: the runner asks this before it writes the frame, so
    such a tensor is that case's error instead of a runner that fails while writing."""
    if t.is_nested:
        return "nested"
    if t.layout != torch.strided:
        return str(t.layout).removeprefix("torch.").lstrip("_")
    if t.dtype not in _DTYPE_NAMES:
        return str(t.dtype)
    return None


def _tensor_bytes(t: torch.Tensor) -> bytes:
    t = t.detach().to("cpu").contiguous()
    if t.dtype not in _DTYPE_NAMES:
        raise ValueError(f"cannot store a tensor of dtype {t.dtype} as safetensors")
    n = t.numel() * t.element_size()
    # A byte copy of the tensor's memory without numpy (which the kit may not have).
    return ctypes.string_at(t.data_ptr(), n) if n else b""


def save_safetensors(tensors: dict[str, torch.Tensor]) -> bytes:
    if sys.byteorder != "little":  # safetensors is little-endian; so is every machine torch runs on
        raise ValueError("safetensors needs a little-endian machine")
    header: dict[str, Any] = {}
    chunks: list[bytes] = []
    offset = 0
    for name in sorted(tensors):
        t = tensors[name]
        data = _tensor_bytes(t)
        header[name] = {
            "dtype": _DTYPE_NAMES[t.dtype],
            "shape": list(t.shape),
            "data_offsets": [offset, offset + len(data)],
        }
        chunks.append(data)
        offset += len(data)
    head = json.dumps(header, separators=(",", ":")).encode("utf-8")
    head += b" " * (-len(head) % 8)  # the format aligns the data to 8 bytes
    return struct.pack("<Q", len(head)) + head + b"".join(chunks)


def parse_stream(data: bytes, limits: StreamLimits | None = None) -> ParsedStream:
    """Parse frames from `data`. Stops at the first malformed frame and says why.

    Frames before the bad one are kept, so a run that was killed mid-frame still
    yields the cases it completed.
    """
    limits = limits or StreamLimits()
    frames: list[Frame] = []
    if len(data) > limits.max_bytes:
        return ParsedStream(frames, f"result stream is larger than {limits.max_bytes} bytes")
    pos = 0
    total_elements = 0
    while pos < len(data):
        if len(frames) >= limits.max_frames:
            return ParsedStream(frames, f"result stream has more than {limits.max_frames} frames")
        if len(data) - pos < _PREFIX.size:
            return ParsedStream(frames, "result stream ends inside a frame header")
        magic, head_len, blob_len = _PREFIX.unpack_from(data, pos)
        if magic != MAGIC:
            return ParsedStream(frames, f"result stream has foreign bytes at offset {pos}")
        if head_len > limits.max_head_bytes:
            return ParsedStream(frames, f"frame head of {head_len} bytes exceeds {limits.max_head_bytes}")
        start = pos + _PREFIX.size
        end = start + head_len + blob_len
        if end > len(data):
            return ParsedStream(frames, "result stream ends inside a frame")
        try:
            head = _load_json(data[start : start + head_len], "frame head")
        except ProtocolError as exc:
            return ParsedStream(frames, str(exc))
        if not isinstance(head, dict) or not isinstance(head.get("kind"), str):
            return ParsedStream(frames, "frame head is not an object with a kind")
        try:
            tensors, elements = parse_safetensors(data[start + head_len : end], limits)
        except ProtocolError as exc:
            return ParsedStream(frames, str(exc))
        total_elements += elements
        if total_elements > limits.max_elements_total:
            return ParsedStream(frames, f"result stream holds more than {limits.max_elements_total} elements")
        frames.append(Frame(head, tensors))
        pos = end
    return ParsedStream(frames)


class HeadScanner:
    """Reads frame heads out of a result stream while its bytes still arrive, skipping the
    blobs: what a running judgement's progress is read from. It keeps at most one frame's
    prefix and head. Bytes that are not a frame stop it for good (parse_stream, on the whole
    stream after the job, says what was wrong); what it returns is unchecked, for display only."""

    def __init__(self, max_head_bytes: int = StreamLimits.max_head_bytes) -> None:
        self._max_head = max_head_bytes
        self._pending = bytearray()
        self._skip = 0  # bytes of the current frame's blob still to come
        self.stopped = False

    def feed(self, data: bytes) -> list[dict[str, Any]]:
        if self.stopped:
            return []
        skipped = min(self._skip, len(data))
        self._skip -= skipped
        self._pending.extend(memoryview(data)[skipped:])
        heads: list[dict[str, Any]] = []
        while len(self._pending) >= _PREFIX.size:
            magic, head_len, blob_len = _PREFIX.unpack_from(self._pending)
            if magic != MAGIC or head_len > self._max_head:
                self._stop()
                break
            head_end = _PREFIX.size + head_len
            if len(self._pending) < head_end:
                break
            try:
                head = _load_json(bytes(self._pending[_PREFIX.size : head_end]), "frame head")
            except ProtocolError:
                self._stop()
                break
            if isinstance(head, dict):
                heads.append(head)
            frame_end = head_end + blob_len
            if len(self._pending) >= frame_end:
                del self._pending[:frame_end]
            else:
                self._skip = frame_end - len(self._pending)
                self._pending.clear()
        return heads

    def _stop(self) -> None:
        self.stopped = True
        self._pending.clear()


def _load_json(raw: bytes, what: str) -> Any:
    """Untrusted JSON. Every way it can fail is a ProtocolError: besides malformed text, an
    integer of thousands of digits (ValueError), nesting past the recursion limit, and
    invalid UTF-8."""
    try:
        return json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError) as exc:  # JSONDecodeError and UnicodeDecodeError included
        reason = exc.msg if isinstance(exc, json.JSONDecodeError) else "it cannot be read"
        raise ProtocolError(f"{what} is not valid JSON ({reason})") from None


def parse_safetensors(blob: bytes, limits: StreamLimits) -> tuple[dict[str, torch.Tensor], int]:
    """Check a safetensors blob against the limits, then load it. Returns (tensors, elements).

    Raises ProtocolError and nothing else, whatever the blob holds."""
    try:
        return _parse_safetensors(blob, limits)
    except ProtocolError:
        raise
    except Exception:  # a shape of bad input the checks above did not foresee: still bad input
        raise ProtocolError("safetensors blob cannot be read") from None


def _parse_safetensors(blob: bytes, limits: StreamLimits) -> tuple[dict[str, torch.Tensor], int]:
    if not blob:
        return {}, 0
    if len(blob) < 8:
        raise ProtocolError("safetensors blob is shorter than its header size field")
    (header_len,) = struct.unpack_from("<Q", blob, 0)
    if header_len > min(limits.max_head_bytes, len(blob) - 8):
        raise ProtocolError("safetensors header size is out of bounds")
    header = _load_json(blob[8 : 8 + header_len], "safetensors header")
    if not isinstance(header, dict):
        raise ProtocolError("safetensors header is not an object")
    header.pop("__metadata__", None)
    if len(header) > limits.max_tensors_per_frame:
        raise ProtocolError(f"frame holds more than {limits.max_tensors_per_frame} tensors")
    data_len = len(blob) - 8 - header_len
    spans: list[tuple[int, int]] = []
    elements = 0
    for name, info in header.items():
        if not isinstance(info, dict):
            raise ProtocolError(f"tensor {name[:40]!r} has a malformed entry")
        dtype_name, shape, offsets = info.get("dtype"), info.get("shape"), info.get("data_offsets")
        if not isinstance(dtype_name, str) or dtype_name not in SAFETENSORS_DTYPES:
            raise ProtocolError(f"tensor {name[:40]!r} has an unsupported dtype")
        if not (isinstance(shape, list) and len(shape) <= 16):
            raise ProtocolError(f"tensor {name[:40]!r} has a malformed shape")
        if not all(isinstance(d, int) and not isinstance(d, bool) and 0 <= d < 2**40 for d in shape):
            raise ProtocolError(f"tensor {name[:40]!r} has a malformed shape")
        if not (
            isinstance(offsets, list)
            and len(offsets) == 2
            and all(isinstance(o, int) and not isinstance(o, bool) for o in offsets)
            and 0 <= offsets[0] <= offsets[1] <= data_len
        ):
            raise ProtocolError(f"tensor {name[:40]!r} has offsets outside the blob")
        count = math.prod(shape)
        elements += count
        if elements > limits.max_elements_per_frame:
            raise ProtocolError(f"frame holds more than {limits.max_elements_per_frame} elements")
        # An empty tensor has no bytes, but a shape like (0, 2**39, 2**39) still overflows
        # torch's size arithmetic: the non-zero extents are bounded like an element count.
        if math.prod(d for d in shape if d) > limits.max_elements_per_frame:
            raise ProtocolError(f"tensor {name[:40]!r} has a shape larger than the judge accepts")
        if count * SAFETENSORS_DTYPES[dtype_name][1] != offsets[1] - offsets[0]:
            raise ProtocolError(f"tensor {name[:40]!r} has a byte size that does not match its shape")
        spans.append((offsets[0], offsets[1]))
    ordered = sorted(spans)
    for (_, end_a), (start_b, _) in itertools.pairwise(ordered):
        if start_b < end_a:
            raise ProtocolError("safetensors tensors overlap")
    # Every entry was checked above (dtype, shape, offsets inside the blob, byte size): now the
    # bytes become tensors, each a copy, so nothing refers to the blob afterwards.
    base = 8 + header_len
    tensors: dict[str, torch.Tensor] = {}
    for (name, info), (start, end) in zip(header.items(), spans, strict=True):
        dtype, _size = SAFETENSORS_DTYPES[info["dtype"]]
        raw = bytearray(blob[base + start : base + end])
        if dtype == torch.bool:
            flat = torch.frombuffer(raw, dtype=torch.uint8) if raw else torch.empty(0, dtype=torch.uint8)
            if bool((flat > 1).any()):
                raise ProtocolError(f"tensor {name[:40]!r} holds bools other than 0 and 1")
            flat = flat.to(torch.bool)
        else:
            flat = torch.frombuffer(raw, dtype=dtype) if raw else torch.empty(0, dtype=dtype)
        tensors[name] = flat.reshape(info["shape"]).clone()
    return tensors, elements
