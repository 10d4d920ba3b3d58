"""The admin page: users (reset links), registration and invite codes, every submission, rejudging,
each problem's validation status."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from web.admin import service
from web.auth import invites
from web.auth.registration import registration_mode
from web.db import utcnow
from web.deps import DbDep, ProblemsDep, SettingsDep
from web.pages.common import PageAdminDep, to_login
from web.pages.templating import render

router = APIRouter(include_in_schema=False)


@router.get("/admin", response_class=HTMLResponse)
def admin_page(
    request: Request, principal: PageAdminDep, db: DbDep, offered: ProblemsDep, settings: SettingsDep
) -> Response:
    if principal is None:
        return to_login(request)
    return render(
        request,
        "admin.html",
        principal,
        users=service.users(db),
        counts=service.submission_counts(db),
        submissions=service.all_submissions(db, None, 100),
        problems=service.problems(db, offered),
        registration=registration_mode(db, settings),
        invites=invites.listed(db),
        now=utcnow(),
    )
