"""The problem list and one problem: readable without an account."""

from __future__ import annotations

from fastapi import APIRouter

from web.deps import DbDep, DbText, OptionalUserDep, StatementsDep
from web.problems import service
from web.problems.service import ProblemDetail, ProblemSummary

router = APIRouter(prefix="/api/problems", tags=["problems"])


@router.get("", response_model=list[ProblemSummary])
def list_problems(db: DbDep, user: OptionalUserDep) -> list[ProblemSummary]:
    return service.list_problems(db, user)


@router.get("/{problem_id}", response_model=ProblemDetail)
def get_problem(
    problem_id: DbText, db: DbDep, user: OptionalUserDep, statements: StatementsDep
) -> ProblemDetail:
    return service.get_problem(db, statements, problem_id, user)
