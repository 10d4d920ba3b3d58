"""The byte protocol between the judge's host and a warm sandbox server (stdlib only).

A warm container runs `python3 -m sandbox.forkserver`; its only channel is the attach
stream. Requests go in on stdin:

    b"JOB1" | u32 header length | header (JSON: the limits) | u64 payload length | payload

and the server answers on stdout with envelopes, `tag (1 byte) | u32 length | payload`:

    H  ready: the server has preloaded everything and waits for a request (JSON)
    R  bytes of the current job's result stream (the runner's frames)
    L  bytes of the current job's log (the learner's prints and stderr)
    E  the job ended (JSON: exit status, resources used, which limit stopped it, whether
       the server is still fit for another job)

The job's own processes never write to stdout: their output reaches the server through
pipes and the server wraps it, so learner code cannot forge an envelope.
"""

from __future__ import annotations

import json
import struct
from typing import Any

from sandbox.errors import SandboxError

REQUEST_MAGIC = b"JOB1"
_REQUEST_HEAD = struct.Struct(">4sI")
_PAYLOAD_LEN = struct.Struct(">Q")
_ENVELOPE = struct.Struct(">cI")
ENVELOPE_HEADER = _ENVELOPE.size
MAX_HEADER_BYTES = 64 * 1024
MAX_PAYLOAD_BYTES = 64 * 1024 * 1024
# The largest chunk of job output a server wraps in one envelope.
MAX_ENVELOPE_BYTES = 1 << 20

READY, RESULT, LOG, END = b"H", b"R", b"L", b"E"
TAGS = (READY, RESULT, LOG, END)


class WireError(SandboxError, ValueError):
    """The bytes are not a request or envelope of this protocol."""


def encode_request(header: dict[str, Any], payload: bytes) -> bytes:
    head = json.dumps(header).encode()
    return _REQUEST_HEAD.pack(REQUEST_MAGIC, len(head)) + head + _PAYLOAD_LEN.pack(len(payload)) + payload


def envelope_head(tag: bytes, size: int) -> bytes:
    """The header of an envelope of `size` payload bytes (the server writes the payload after it)."""
    return _ENVELOPE.pack(tag, size)


class EnvelopeReader:
    """Splits a byte stream into (tag, payload) envelopes, refusing anything malformed."""

    def __init__(self) -> None:
        self._pending = bytearray()

    def feed(self, data: bytes) -> list[tuple[bytes, bytes]]:
        self._pending.extend(data)
        out = []
        while len(self._pending) >= ENVELOPE_HEADER:
            tag, size = _ENVELOPE.unpack_from(self._pending)
            if tag not in TAGS or size > MAX_ENVELOPE_BYTES:
                raise WireError(f"bad envelope (tag {tag!r}, {size} bytes)")
            if len(self._pending) < ENVELOPE_HEADER + size:
                break
            out.append((tag, bytes(self._pending[ENVELOPE_HEADER : ENVELOPE_HEADER + size])))
            del self._pending[: ENVELOPE_HEADER + size]
        return out


def read_request_head(read_exact: Any) -> tuple[dict[str, Any], int] | None:
    """A request's header and its payload's length, from `read_exact(n) -> bytes` (short only
    at end of input), leaving the payload unread: the server copies it without keeping it.
    None at end of input."""
    head = read_exact(_REQUEST_HEAD.size)
    if not head:
        return None
    if len(head) < _REQUEST_HEAD.size:
        raise WireError("input ended inside a request")
    magic, size = _REQUEST_HEAD.unpack(head)
    if magic != REQUEST_MAGIC or size > MAX_HEADER_BYTES:
        raise WireError("not a request")
    header_bytes = read_exact(size)
    length_bytes = read_exact(_PAYLOAD_LEN.size)
    if len(header_bytes) < size or len(length_bytes) < _PAYLOAD_LEN.size:
        raise WireError("input ended inside a request")
    (length,) = _PAYLOAD_LEN.unpack(length_bytes)
    if length > MAX_PAYLOAD_BYTES:
        raise WireError("request payload too large")
    header = json.loads(header_bytes)
    if not isinstance(header, dict):
        raise WireError("request header is not an object")
    return header, length
