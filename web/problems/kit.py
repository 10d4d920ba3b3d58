"""GET /kit.zip: the practice kit for the problems this server offers, pointed at this server
(built and kept by the platform: web.problems.kitstore). The problem list starts the build in
the background and shows how far it got (GET /api/kit/status), so the first learner to download
is not left waiting without a word.

`?mine=1` from a logged-in learner puts their latest accepted code of each problem into its file
(practice/qwen/norm.py, ...) instead of the starter.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from web.deps import DbDep, KitDep, PlatformDep, get_principal

# A download for browsers and the README, not part of the JSON API (no schema entry).
router = APIRouter(include_in_schema=False)


@router.get("/kit.zip", response_class=Response)
async def download_kit(
    request: Request,
    platform: PlatformDep,
    kit: KitDep,
    db: DbDep,
    mine: Annotated[bool, Query(description="your latest accepted code in your files (logged in)")] = False,
) -> Response:
    """The offline practice kit: statements, starters (or, with `mine`, the learner's accepted
    code), public cases, the tiny practice checkpoint and `practice/judge.py`. Who asks matters
    only with `mine` (anonymous: the public kit)."""
    principal = await get_principal(request, platform, db) if mine else None
    if principal is not None:
        body = await run_in_threadpool(kit.for_learner, db, principal.user.id)
    else:
        body = await run_in_threadpool(kit.zip)
    return Response(
        body,
        media_type="application/zip",
        headers={"Content-Disposition": 'attachment; filename="llm-judge-practice.zip"'},
    )


@router.get("/api/kit/status")
def kit_status(kit: KitDep) -> dict[str, object]:
    """Whether the kit is ready to download; starts building it when not (the page polls)."""
    return kit.status()
