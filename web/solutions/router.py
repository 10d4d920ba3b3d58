"""After an accepted submission: the reference and the other accepted formulations (issue 20, item 8)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request

from web.deps import MAX_ID, DbDep, DbText, JudgeDep, ProblemsDep, UserDep, reader_language
from web.solutions import service
from web.solutions.service import SolutionsOut

router = APIRouter(prefix="/api/problems", tags=["solutions"])


@router.get("/{problem_id}/solutions", response_model=SolutionsOut)
def read_solutions(
    problem_id: DbText,
    request: Request,
    user: UserDep,
    db: DbDep,
    problems: ProblemsDep,
    judge: JudgeDep,
    submission: Annotated[int | None, Query(ge=1, le=MAX_ID)] = None,
) -> SolutionsOut:
    """The reference and every accepted formulation, each with why it is right, for a user with an
    accepted submit of the problem (else 403); and `timing`: an accepted submit's time (the one
    named by `submission`, else the latest) beside the reference's on the same cases, or null."""
    lang = reader_language(request, user.language)
    return service.read(db, problems, judge, user, problem_id, lang, submission)
