"""Saving and loading the editor's draft of a problem, so it follows the learner across browsers."""

from __future__ import annotations

from fastapi import APIRouter, Response
from pydantic import BaseModel

from web.deps import DbDep, DbText, SettingsDep, UserDep
from web.drafts import service
from web.drafts.service import DraftOut

router = APIRouter(prefix="/api/problems", tags=["drafts"])


class DraftIn(BaseModel):
    code: DbText


@router.get("/{problem_id}/draft", response_model=DraftOut)
def get_draft(problem_id: DbText, user: UserDep, db: DbDep) -> DraftOut:
    return service.get_draft(db, user, problem_id)


@router.put("/{problem_id}/draft", response_model=DraftOut)
def save_draft(
    problem_id: DbText, body: DraftIn, user: UserDep, db: DbDep, settings: SettingsDep
) -> DraftOut:
    return service.save_draft(db, settings, user, problem_id, body.code)


@router.delete("/{problem_id}/draft", status_code=204)
def delete_draft(problem_id: DbText, user: UserDep, db: DbDep) -> Response:
    """Reset to the starter: the draft is forgotten."""
    service.delete_draft(db, user, problem_id)
    return Response(status_code=204)
