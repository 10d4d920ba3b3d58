"""GET /kit.zip: the practice kit for the problems this server offers, pointed at this server.

Built once per problem set and kept by the platform (`Platform.kit`), in memory and in the cache
folder (a restarted server reads it back): building runs the reference and the known mistakes of
every problem (cached on disk by the judge), so it costs seconds once, not per download. The
problem list starts the build in the background and shows how far it got (GET /api/kit/status), so
the first learner to download is not left waiting without a word. The server URL written into it
is the platform's public URL (JUDGE_PUBLIC_URL), never the request's Host header, which the
client chooses.

`?mine=1` from a logged-in learner puts their latest accepted code of each problem into its file
(practice/qwen/norm.py, ...) instead of the starter.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import Response
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool

from judge.authoring.kit import build_kit, kit_fingerprint, learner_entries, with_files, zip_kit
from web.deps import DbDep, PlatformDep, get_principal
from web.errors import N_, ApiError
from web.platform import Platform
from web.submissions.parts import latest_accepted

# A download for browsers and the README, not part of the JSON API (no schema entry).
router = APIRouter(include_in_schema=False)
KIT_FOLDER = "kit"  # under the judge's cache folder: the built kit's zip, named by its fingerprint


def _kit_build(platform: Platform) -> tuple[str, Callable[[Callable[[int, int], None]], bytes], Path]:
    """The kit's cache key, how to build it, and the folder that keeps it across restarts."""
    judge = platform.judge
    if judge is None:
        raise ApiError(503, "no_judge", N_("This server judges nothing, so it makes no practice kit."))
    problems = sorted(platform.problems.values(), key=lambda p: p.id)
    server = platform.public_url

    def build(steps: Callable[[int, int], None]) -> bytes:
        with tempfile.TemporaryDirectory(prefix="judge-kit-") as tmp:
            return zip_kit(build_kit(Path(tmp), problems, judge.store, judge.backend, server, steps=steps))

    return kit_fingerprint(problems, server), build, platform.settings.cache_dir / KIT_FOLDER


def kit_zip(platform: Platform) -> bytes:
    key, build, disk = _kit_build(platform)
    return platform.kit.get(key, build, disk)


def start_kit(platform: Platform) -> None:
    """Build the kit in the background unless it is built or being built."""
    key, build, disk = _kit_build(platform)
    platform.kit.start(key, build, disk)


def learner_kit(platform: Platform, db: Session, user_id: int) -> bytes:
    """The kit with the learner's latest accepted code of each problem in its file."""
    kit = kit_zip(platform)
    problems = sorted(platform.problems.values(), key=lambda p: p.id)
    code = {p.id: latest_accepted(db, user_id, p.id) for p in problems}
    files = learner_entries(problems, {pid: c for pid, c in code.items() if c is not None})
    return with_files(kit, files) if files else kit


@router.get("/kit.zip", response_class=Response)
async def download_kit(
    request: Request,
    platform: PlatformDep,
    db: DbDep,
    mine: Annotated[bool, Query(description="your latest accepted code in your files (logged in)")] = False,
) -> Response:
    """The offline practice kit: statements, starters (or, with `mine`, the learner's accepted
    code), public cases, the tiny practice checkpoint and `practice/judge.py`. Who asks matters
    only with `mine` (anonymous: the public kit)."""
    principal = await get_principal(request, platform, db) if mine else None
    if principal is not None:
        body = await run_in_threadpool(learner_kit, platform, db, principal.user.id)
    else:
        body = await run_in_threadpool(kit_zip, platform)
    return Response(
        body,
        media_type="application/zip",
        headers={"Content-Disposition": 'attachment; filename="llm-judge-practice.zip"'},
    )


@router.get("/api/kit/status")
def kit_status(platform: PlatformDep) -> dict[str, object]:
    """Whether the kit is ready to download; starts building it when not (the page polls)."""
    key, _build, _disk = _kit_build(platform)
    if not platform.kit.ready(key):
        start_kit(platform)
    done, total = platform.kit.steps
    ready = platform.kit.ready(key)
    return {"ready": ready, "done": total if ready else done, "total": total, "failed": platform.kit.failure}
