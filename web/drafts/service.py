"""The editor's draft of a problem per learner: read, save (the first save of two tabs at once
included), forget."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from web.auth.models import User
from web.drafts.models import Draft
from web.errors import ensure_code_fits, not_found
from web.problems.sync import current_version
from web.settings import WebSettings


class DraftOut(BaseModel):
    problem_id: str
    code: str | None  # null: no draft yet, the editor opens on the starter
    updated_at: datetime | None


def _known_problem(db: Session, problem_id: str) -> None:
    if current_version(db, problem_id) is None:
        raise not_found("problem", problem_id)


def get_draft(db: Session, user: User, problem_id: str) -> DraftOut:
    _known_problem(db, problem_id)
    draft = db.get(Draft, (user.id, problem_id))
    if draft is None:
        return DraftOut(problem_id=problem_id, code=None, updated_at=None)
    return DraftOut(problem_id=problem_id, code=draft.code, updated_at=draft.updated_at)


def save_draft(db: Session, settings: WebSettings, user: User, problem_id: str, code: str) -> DraftOut:
    ensure_code_fits(code, settings.max_code_bytes)
    _known_problem(db, problem_id)
    draft = db.get(Draft, (user.id, problem_id))
    if draft is None:
        draft = Draft(user_id=user.id, problem_id=problem_id, code=code)
        db.add(draft)
        try:
            db.commit()
        except IntegrityError:
            # Another tab saved the first draft at the same moment: update that row instead.
            db.rollback()
            draft = db.get(Draft, (user.id, problem_id))
            assert draft is not None
    draft.code = code
    db.commit()
    return DraftOut(problem_id=problem_id, code=draft.code, updated_at=draft.updated_at)


def delete_draft(db: Session, user: User, problem_id: str) -> None:
    """Reset to the starter: the draft is forgotten."""
    draft = db.get(Draft, (user.id, problem_id))
    if draft is not None:
        db.delete(draft)
        db.commit()
