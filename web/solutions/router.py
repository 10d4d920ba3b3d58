"""After an accepted submission: the reference and the other accepted formulations (issue 20, item 8)."""

from __future__ import annotations

from fastapi import APIRouter

router = APIRouter(prefix="/api/problems", tags=["solutions"])
