"""The preview's own routes: the author's sign-in link and the version the open page polls."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, RedirectResponse
from sqlalchemy import select

from web.auth.models import User
from web.auth.service import start_session
from web.errors import N_, ApiError
from web.platform import Platform
from web.preview.state import LOGIN_PATH, PreviewState

router = APIRouter(include_in_schema=False)

PREVIEW_USER = "preview"


def preview_of(request: Request) -> PreviewState:
    state: PreviewState = request.app.state.preview
    return state


@router.get(LOGIN_PATH)
def login(request: Request, token: str = "") -> RedirectResponse:
    """The printed URL: signs the author in as the preview user, once, and opens the problem."""
    state = preview_of(request)
    if not state.take_login(token):
        raise ApiError(
            410,
            "link_used",
            N_("This preview link was used already; restart `judge preview` for a new one."),
        )
    platform: Platform = request.app.state.platform
    response = RedirectResponse(state.landing(), status_code=303)
    with platform.factory() as db:
        user = db.scalar(select(User).where(User.username == PREVIEW_USER))
        if user is None:  # made here, not at start-up: the author may never open the link
            user = User(username=PREVIEW_USER, password_hash="!preview: no password signs in")
            db.add(user)
            db.flush()
        start_session(db, platform.settings, platform.secret_key, user, response, https=False)
    return response


@router.get("/preview/version")
def version(request: Request) -> JSONResponse:
    """A hash over the packages' files and their validation records: the page reloads when it changes."""
    return JSONResponse({"version": preview_of(request).version}, headers={"Cache-Control": "no-store"})
