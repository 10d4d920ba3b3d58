"""A class's reports: the gradebook (JSON and CSV; the instructor's), the class leaderboard (its
members' and instructor's) and similar accepted submissions (the instructor's)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import Response

from web.classes import board, export, similar
from web.classes.board import ClassBoard
from web.classes.export import GradebookOut
from web.classes.similar import SimilarOut
from web.deps import DbDep, DbText, IdPath, ProblemsDep, UserDep, platform_of, reader_language

router = APIRouter(prefix="/api/classes", tags=["classes"])

CSV_TYPE = "text/csv; charset=utf-8"


def _gettext(request: Request, language: str | None) -> export.Gettext:
    """The CSV header's words: `?lang=`, else Accept-Language, else the account's language."""
    lang = reader_language(request, language)
    return platform_of(request).catalogs.translations(lang).gettext


@router.get("/{class_id}/assignments/{assignment_id}/gradebook", response_model=GradebookOut)
def gradebook(
    class_id: IdPath, assignment_id: IdPath, user: UserDep, db: DbDep, problems: ProblemsDep
) -> GradebookOut:
    """Learner × problem: best by the due time and overall, first AC, attempts, late, the grade."""
    group, book = export.read_gradebook(db, user, class_id, assignment_id, problems)
    return export.as_json(group, book)


@router.get("/{class_id}/assignments/{assignment_id}/gradebook.csv")
def gradebook_csv(
    class_id: IdPath, assignment_id: IdPath, request: Request, user: UserDep, db: DbDep, problems: ProblemsDep
) -> Response:
    """The gradebook for a spreadsheet: UTF-8 with a BOM, a header in the reader's language, one
    row per learner, times ISO 8601 in UTC."""
    _group, book = export.read_gradebook(db, user, class_id, assignment_id, problems)
    return Response(
        export.gradebook_csv(book, _gettext(request, user.language)),
        media_type=CSV_TYPE,
        headers={
            "Content-Disposition": export.content_disposition(
                f"gradebook-{class_id}-{assignment_id}", book.title
            )
        },
    )


@router.get("/{class_id}/gradebook.csv")
def class_gradebook_csv(
    class_id: IdPath, request: Request, user: UserDep, db: DbDep, problems: ProblemsDep
) -> Response:
    """Every assignment of the class: each learner's grade and count solved per assignment."""
    group, books = export.class_gradebooks(db, user, class_id, problems)
    return Response(
        export.class_csv(books, _gettext(request, user.language)),
        media_type=CSV_TYPE,
        headers={"Content-Disposition": export.content_disposition(f"gradebook-{class_id}", group.name)},
    )


@router.get("/{class_id}/leaderboard", response_model=ClassBoard)
def class_leaderboard(class_id: IdPath, user: UserDep, db: DbDep) -> ClassBoard:
    """The class's members on its assignments' problems, as each chose to be listed."""
    return board.class_board(db, user, class_id)


@router.get("/{class_id}/similar", response_model=SimilarOut)
def similar_submissions(
    class_id: IdPath,
    user: UserDep,
    db: DbDep,
    problems: ProblemsDep,
    problem_id: Annotated[DbText | None, Query(max_length=16)] = None,
) -> SimilarOut:
    """Pairs of members whose accepted code is near-identical after normalising: a list to look
    at, never a penalty."""
    return similar.similar(db, user, class_id, problem_id, problems)
