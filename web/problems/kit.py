"""GET /kit.zip: the practice kit for the problems this server offers, pointed at this server.

Built on first request and kept in memory per (problem versions, server URL): building runs the
reference and the known mistakes of every problem (cached on disk by the judge), so it costs
seconds once, not per download.
"""

from __future__ import annotations

import hashlib
import tempfile
import threading
from pathlib import Path

from fastapi import APIRouter, Request
from fastapi.responses import Response

from judge.kit import build_kit, zip_kit
from web.deps import PlatformDep
from web.errors import ApiError
from web.platform import Platform

# A download for browsers and the README, not part of the JSON API (no schema entry).
router = APIRouter(include_in_schema=False)

_lock = threading.Lock()
_built: dict[str, bytes] = {}


def kit_zip(platform: Platform, server: str) -> bytes:
    if platform.judge is None:
        raise ApiError(
            503, "no_judge", "这台服务器不评测，无法生成练习包 this server judges nothing, so it makes no kit"
        )
    problems = sorted(platform.problems.values(), key=lambda p: p.id)
    key = hashlib.sha256(
        "\n".join([server, *(f"{p.id}:{p.content_hash}" for p in problems)]).encode()
    ).hexdigest()
    with _lock:  # one build at a time; later requests for the same key get the bytes
        if key not in _built:
            with tempfile.TemporaryDirectory(prefix="judge-kit-") as tmp:
                root = build_kit(Path(tmp), problems, platform.judge.store, platform.judge.backend, server)
                _built.clear()  # only the newest problem set is worth keeping
                _built[key] = zip_kit(root)
        return _built[key]


@router.get("/kit.zip", response_class=Response)
def download_kit(request: Request, platform: PlatformDep) -> Response:
    """The offline practice kit: statements, starters, public cases and `practice/judge.py`."""
    server = str(request.base_url).rstrip("/")
    return Response(
        kit_zip(platform, server),
        media_type="application/zip",
        headers={"Content-Disposition": 'attachment; filename="llm-judge-practice.zip"'},
    )
