"""GET /kit.zip: the practice kit for the problems this server offers, pointed at this server.

Built on first request and kept by the platform (`Platform.kit`) per problem set: building runs
the reference and the known mistakes of every problem (cached on disk by the judge), so it costs
seconds once, not per download. The server URL written into it is the platform's public URL
(JUDGE_PUBLIC_URL), never the request's Host header, which the client chooses.
"""

from __future__ import annotations

import hashlib
import tempfile
from pathlib import Path

from fastapi import APIRouter
from fastapi.responses import Response

from judge.kit import build_kit, zip_kit
from web.deps import PlatformDep
from web.errors import N_, ApiError
from web.platform import Platform

# A download for browsers and the README, not part of the JSON API (no schema entry).
router = APIRouter(include_in_schema=False)


def kit_zip(platform: Platform) -> bytes:
    judge = platform.judge
    if judge is None:
        raise ApiError(503, "no_judge", N_("This server judges nothing, so it makes no practice kit."))
    problems = sorted(platform.problems.values(), key=lambda p: p.id)
    server = platform.public_url
    key = hashlib.sha256(
        "\n".join([server, *(f"{p.id}:{p.content_hash}" for p in problems)]).encode()
    ).hexdigest()

    def build() -> bytes:
        with tempfile.TemporaryDirectory(prefix="judge-kit-") as tmp:
            return zip_kit(build_kit(Path(tmp), problems, judge.store, judge.backend, server))

    return platform.kit.get(key, build)


@router.get("/kit.zip", response_class=Response)
def download_kit(platform: PlatformDep) -> Response:
    """The offline practice kit: statements, starters, public cases and `practice/judge.py`."""
    return Response(
        kit_zip(platform),
        media_type="application/zip",
        headers={"Content-Disposition": 'attachment; filename="llm-judge-practice.zip"'},
    )
