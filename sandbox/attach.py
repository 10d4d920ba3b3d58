"""Docker's attach stream: frames of (stream id, payload), and capped buffers to collect them.

Frame header: stream id (1 stdout, 2 stderr), three zero bytes, payload length (u32 BE).
"""

from __future__ import annotations

HEADER = 8


class AttachFrames:
    """Splits the multiplexed byte stream into (stream id, payload) frames as they complete."""

    def __init__(self) -> None:
        self._pending = bytearray()

    def feed(self, chunk: bytes) -> list[tuple[int, bytes]]:
        self._pending.extend(chunk)
        frames = []
        while len(self._pending) >= HEADER:
            size = int.from_bytes(self._pending[4:8], "big")
            if len(self._pending) < HEADER + size:
                break
            frames.append((self._pending[0], bytes(self._pending[HEADER : HEADER + size])))
            del self._pending[: HEADER + size]
        return frames


def append_capped(buf: bytearray, payload: bytes, cap: int) -> bool:
    """Append what fits under `cap`. True when the payload did not all fit."""
    room = cap - len(buf)
    buf.extend(payload[: max(room, 0)])
    return len(payload) > room
