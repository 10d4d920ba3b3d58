"""The course: chapters in order, prerequisites, the next problem, progress (issue 20, item 7)."""

from __future__ import annotations

from fastapi import APIRouter

router = APIRouter(prefix="/api/course", tags=["course"])
