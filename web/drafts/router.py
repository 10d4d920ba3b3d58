"""Saving and loading the editor's draft of a problem, so it follows the learner across browsers."""

from __future__ import annotations

from datetime import datetime

from fastapi import APIRouter, Response
from pydantic import BaseModel
from sqlalchemy.exc import IntegrityError

from web.deps import DbDep, DbText, PlatformDep, UserDep
from web.drafts.models import Draft
from web.errors import ensure_code_fits, not_found
from web.problems.sync import current_version

router = APIRouter(prefix="/api/problems", tags=["drafts"])


class DraftIn(BaseModel):
    code: DbText


class DraftOut(BaseModel):
    problem_id: str
    code: str | None  # null: no draft yet, the editor opens on the starter
    updated_at: datetime | None


def _known_problem(db: DbDep, problem_id: str) -> None:
    if current_version(db, problem_id) is None:
        raise not_found(f"problem {problem_id}")


@router.get("/{problem_id}/draft", response_model=DraftOut)
def get_draft(problem_id: DbText, user: UserDep, db: DbDep) -> DraftOut:
    _known_problem(db, problem_id)
    draft = db.get(Draft, (user.id, problem_id))
    if draft is None:
        return DraftOut(problem_id=problem_id, code=None, updated_at=None)
    return DraftOut(problem_id=problem_id, code=draft.code, updated_at=draft.updated_at)


@router.put("/{problem_id}/draft", response_model=DraftOut)
def save_draft(
    problem_id: DbText, body: DraftIn, user: UserDep, db: DbDep, platform: PlatformDep
) -> DraftOut:
    ensure_code_fits(body.code, platform.settings.max_code_bytes)
    _known_problem(db, problem_id)
    draft = db.get(Draft, (user.id, problem_id))
    if draft is None:
        draft = Draft(user_id=user.id, problem_id=problem_id, code=body.code)
        db.add(draft)
        try:
            db.commit()
        except IntegrityError:
            # Another tab saved the first draft at the same moment: update that row instead.
            db.rollback()
            draft = db.get(Draft, (user.id, problem_id))
            assert draft is not None
    draft.code = body.code
    db.commit()
    return DraftOut(problem_id=problem_id, code=draft.code, updated_at=draft.updated_at)


@router.delete("/{problem_id}/draft", status_code=204)
def delete_draft(problem_id: DbText, user: UserDep, db: DbDep) -> Response:
    """Reset to the starter: the draft is forgotten."""
    draft = db.get(Draft, (user.id, problem_id))
    if draft is not None:
        db.delete(draft)
        db.commit()
    return Response(status_code=204)
