"""The admin page: users, every submission, rejudging, each problem's validation status."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response
from sqlalchemy import func, select

from web.admin.router import all_submissions, problems, users
from web.deps import DbDep
from web.errors import ApiError
from web.pages.common import PageUserDep, to_login
from web.pages.templating import render
from web.submissions.models import Submission

router = APIRouter(include_in_schema=False)


@router.get("/admin", response_class=HTMLResponse)
def admin_page(request: Request, principal: PageUserDep, db: DbDep) -> Response:
    if principal is None:
        return to_login(request)
    if not principal.user.is_admin:
        raise ApiError(403, "admin_only", "only admins may do this")
    counts: dict[int, int] = {
        user_id: n
        for user_id, n in db.execute(select(Submission.user_id, func.count()).group_by(Submission.user_id))
    }
    return render(
        request,
        "admin.html",
        principal,
        users=users(principal.user, db),
        counts=counts,
        submissions=all_submissions(principal.user, db, None, 100),
        problems=problems(principal.user, db),
    )
