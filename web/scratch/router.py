"""The scratch cell: the learner's code on inputs they write, in the sandbox, never scored."""

from __future__ import annotations

from fastapi import APIRouter

router = APIRouter(prefix="/api/scratch", tags=["scratch"])
