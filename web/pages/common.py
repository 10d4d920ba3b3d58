"""What every page route needs: who is asking, safe redirects, the login wall."""

from __future__ import annotations

from typing import Annotated
from urllib.parse import quote

from fastapi import Depends, Request
from fastapi.responses import RedirectResponse
from sqlalchemy.orm import Session

from web.deps import Principal, get_principal, read_principal, require_admin
from web.platform import Platform


async def page_principal(
    request: Request, principal: Annotated[Principal | None, Depends(get_principal)]
) -> Principal | None:
    # Kept on the request so an error page rendered later still shows who is logged in.
    request.state.principal = principal
    return principal


PageUserDep = Annotated[Principal | None, Depends(page_principal)]


async def page_admin(principal: PageUserDep) -> Principal | None:
    """The admin pages' reader: None (anonymous: the route sends them to log in), else an admin
    (anyone else gets the API's 403 admin_only, as a page)."""
    if principal is not None:
        await require_admin(principal.user)
    return principal


PageAdminDep = Annotated[Principal | None, Depends(page_admin)]


def page_reader(request: Request, platform: Platform, db: Session) -> Principal | None:
    """What PageUserDep gives a GET route (no CSRF token to check), for a route that does all
    its work in one thread of its own: blocking, so never on the event loop."""
    principal = read_principal(request, platform, db)
    request.state.principal = principal
    return principal


def safe_next(target: str | None, default: str = "/problems") -> str:
    """Only paths on this site: '//evil.example' and 'https://…' would leave it after a login."""
    if not target or not target.startswith("/") or target.startswith("//") or "\\" in target:
        return default
    return target


def redirect(target: str) -> RedirectResponse:
    return RedirectResponse(target, status_code=303)


def to_login(request: Request) -> RedirectResponse:
    here = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    # `needed` tells the login page to say why the visitor is there.
    return redirect(f"/login?next={quote(here, safe='')}&needed=1")
