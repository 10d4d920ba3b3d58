"""FastAPI dependencies as Annotated aliases: the platform, a database session, who is asking."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Path, Request
from pydantic import AfterValidator
from sqlalchemy import select
from sqlalchemy.orm import Session

from web.auth.models import ApiToken, LoginSession, User
from web.auth.secrets import token_hash
from web.db import utcnow
from web.errors import ApiError
from web.platform import Platform

SESSION_COOKIE = "judge_session"
CSRF_HEADER = "x-csrf-token"
SAFE_METHODS = {"GET", "HEAD", "OPTIONS"}
# Row ids are INTEGER columns (32 bits on PostgreSQL, 64 on SQLite): a larger id names no row,
# and the database cannot even bind it (a 500), so path ids are checked like any other input.
MAX_ID = 2**31 - 1

IdPath = Annotated[int, Path(ge=1, le=MAX_ID)]


def storable_text(value: str) -> str:
    """Text a database can hold. PostgreSQL cannot store NUL (psycopg refuses to send it) and no
    UTF-8 database can store a lone surrogate (JSON allows "\\ud800"): both were 500s, now 422s,
    the same answer whichever database runs."""
    if "\x00" in value:
        raise ValueError("must not contain the NUL character")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("must be valid Unicode (no lone surrogates)") from None
    return value


# Every request string that reaches a query or a column (bodies, query and path parameters).
DbText = Annotated[str, AfterValidator(storable_text)]


def get_platform(request: Request) -> Platform:
    platform: Platform = request.app.state.platform
    return platform


PlatformDep = Annotated[Platform, Depends(get_platform)]


def get_db(platform: PlatformDep) -> Iterator[Session]:
    with platform.factory() as session:
        yield session


DbDep = Annotated[Session, Depends(get_db)]


@dataclass
class Principal:
    user: User
    session: LoginSession | None = None  # set for browser sessions (cookie)
    token: ApiToken | None = None  # set for scripts (Bearer)


async def _form_csrf(request: Request) -> str | None:
    if request.headers.get("content-type", "").startswith(
        ("application/x-www-form-urlencoded", "multipart/")
    ):
        form = await request.form()
        value = form.get("csrf_token")
        return value if isinstance(value, str) else None
    return None


async def get_principal(request: Request, platform: PlatformDep, db: DbDep) -> Principal | None:
    auth = request.headers.get("authorization")
    if auth is not None:
        scheme, _, raw = auth.partition(" ")
        if scheme.lower() != "bearer" or not raw.strip():
            raise ApiError(401, "bad_token", "Authorization must be 'Bearer <token>'")
        token = db.scalar(
            select(ApiToken).where(
                ApiToken.token_hash == token_hash(platform.secret_key, raw.strip()),
                ApiToken.revoked_at.is_(None),
            )
        )
        if token is None:
            raise ApiError(401, "bad_token", "this API token is unknown or revoked")
        user = db.get(User, token.user_id)
        if user is None:
            raise ApiError(401, "bad_token", "this API token's user is gone")
        token.last_used_at = utcnow()
        db.commit()
        return Principal(user, token=token)
    cookie = request.cookies.get(SESSION_COOKIE)
    if not cookie:
        return None
    session = db.scalar(
        select(LoginSession).where(LoginSession.token_hash == token_hash(platform.secret_key, cookie))
    )
    if session is None or session.expires_at <= utcnow():
        return None  # an expired session is the same as none; pages ask to log in again
    if request.method not in SAFE_METHODS:
        sent = request.headers.get(CSRF_HEADER) or await _form_csrf(request)
        if sent != session.csrf_token:
            raise ApiError(403, "csrf_failed", "missing or wrong CSRF token; reload the page and try again")
    user = db.get(User, session.user_id)
    return Principal(user, session=session) if user is not None else None


OptionalPrincipalDep = Annotated[Principal | None, Depends(get_principal)]


def require_principal(principal: OptionalPrincipalDep) -> Principal:
    if principal is None:
        raise ApiError(401, "login_required", "log in (or send an API token) first")
    return principal


PrincipalDep = Annotated[Principal, Depends(require_principal)]


def require_user(principal: PrincipalDep) -> User:
    return principal.user


UserDep = Annotated[User, Depends(require_user)]


def optional_user(principal: OptionalPrincipalDep) -> User | None:
    return principal.user if principal else None


OptionalUserDep = Annotated[User | None, Depends(optional_user)]


def require_admin(user: UserDep) -> User:
    if not user.is_admin:
        raise ApiError(403, "admin_only", "only admins may do this")
    return user


AdminDep = Annotated[User, Depends(require_admin)]


def client_address(request: Request) -> str:
    return request.client.host if request.client else "unknown"
