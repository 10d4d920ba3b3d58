"""My classes (a learner's classes and what is due; an instructor's classes), one class's page
(its instructor: code, members, assignments, everyone's progress; a member: their own), and a
member's submissions for the instructor. The forms post to the API from web/frontend/src/classes.js."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from web.classes import service
from web.classes.access import manages, visible_class
from web.deps import DbDep, IdPath
from web.pages.common import PageUserDep, to_login
from web.pages.templating import render
from web.problems.service import current_titles

router = APIRouter(include_in_schema=False)


@router.get("/classes", response_class=HTMLResponse)
def classes_page(request: Request, principal: PageUserDep, db: DbDep) -> Response:
    if principal is None:
        return to_login(request)
    mine = service.my_classes(db, principal.user)
    return render(request, "classes.html", principal, mine=mine, titles=current_titles(db))


@router.get("/classes/{class_id}", response_class=HTMLResponse)
def class_page(class_id: IdPath, request: Request, principal: PageUserDep, db: DbDep) -> Response:
    if principal is None:
        return to_login(request)
    user = principal.user
    group = visible_class(db, user, class_id)  # another's class: a 404 page
    view = service.class_view(db, user, class_id)
    titles = current_titles(db)
    runs = manages(user, group)
    page_data = {
        "class_id": group.id,
        "manages": runs,
        "assignments": [a.model_dump(mode="json") for a in view.assignments],
        "members": [m.model_dump(mode="json") for m in view.members],
    }
    return render(
        request,
        "class.html",
        principal,
        view=view,
        manages=runs,
        progress=service.progress(db, user, group),
        titles=titles,
        page_data=page_data,
    )


@router.get("/classes/{class_id}/members/{user_id}", response_class=HTMLResponse)
def member_page(
    class_id: IdPath, user_id: IdPath, request: Request, principal: PageUserDep, db: DbDep
) -> Response:
    """A member's submissions to the class's problems, for its instructor: each links to the
    submission's read-only page."""
    if principal is None:
        return to_login(request)
    rows = service.member_submissions(db, principal.user, class_id, user_id)
    group = visible_class(db, principal.user, class_id)
    return render(
        request,
        "class_member.html",
        principal,
        group=group,
        member=service.member_name(db, user_id),
        rows=rows,
        titles=current_titles(db),
    )
