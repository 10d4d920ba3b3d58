"""FastAPI dependencies as Annotated aliases: the platform and the pieces of it that routes use,
a database session, who is asking. This is the one place that picks pieces off the platform:
routes take the pieces they use, and hand services those pieces, never the whole platform."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import timedelta
from typing import Annotated

from anyio import CapacityLimiter, to_thread
from fastapi import Depends, Path, Request
from pydantic import AfterValidator
from sqlalchemy import bindparam, select
from sqlalchemy.orm import Session, sessionmaker
from starlette.concurrency import run_in_threadpool

from judge.authoring.package import Problem
from web import language
from web.auth.models import ApiToken, LoginSession, User
from web.auth.scopes import check_token
from web.auth.secrets import token_hash
from web.db import utcnow
from web.errors import N_, ApiError
from web.judging.judges import JudgeContext
from web.judging.waiting import CompletionBoard
from web.language import Language
from web.notify import Notices
from web.platform import Platform
from web.preview.state import PreviewState
from web.problems.kitstore import PracticeKit
from web.settings import WebSettings
from web.statements import Statements

SESSION_COOKIE = "judge_session"
CSRF_HEADER = "x-csrf-token"
SAFE_METHODS = {"GET", "HEAD", "OPTIONS"}
# Row ids are INTEGER columns (32 bits on PostgreSQL, 64 on SQLite): a larger id names no row,
# and the database cannot even bind it (a 500), so path ids are checked like any other input.
MAX_ID = 2**31 - 1
# How fresh an API token's last_used_at is kept (a write per request would be the cost).
TOKEN_USE_RESOLUTION = timedelta(minutes=1)

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


def platform_of(request: Request) -> Platform:
    platform: Platform = request.app.state.platform
    return platform


def preview_of(request: Request) -> PreviewState | None:
    """The preview's state when the app runs as `judge preview` (the banner reads it), else None."""
    preview: PreviewState | None = request.app.state.preview
    return preview


async def get_platform(request: Request) -> Platform:
    # async: no I/O, so FastAPI calls it on the event loop instead of handing it to a thread.
    return platform_of(request)


PlatformDep = Annotated[Platform, Depends(get_platform)]


# The pieces. Each is async for the same reason as get_platform: no I/O, so no thread.
async def get_settings(platform: PlatformDep) -> WebSettings:
    return platform.settings


async def get_notices(platform: PlatformDep) -> Notices:
    return platform.notices


async def get_board(platform: PlatformDep) -> CompletionBoard:
    return platform.board


async def get_problems(platform: PlatformDep) -> dict[str, Problem]:
    return platform.problems


async def get_judge(platform: PlatformDep) -> JudgeContext | None:
    return platform.judge


async def get_statements(platform: PlatformDep) -> Statements:
    return platform.statements


async def get_kit(platform: PlatformDep) -> PracticeKit:
    return platform.kit


async def get_secret_key(platform: PlatformDep) -> str:
    return platform.secret_key


async def get_factory(platform: PlatformDep) -> sessionmaker[Session]:
    """For work that outlives the request (a validation in the background): sessions of its own."""
    return platform.factory


SettingsDep = Annotated[WebSettings, Depends(get_settings)]
NoticesDep = Annotated[Notices, Depends(get_notices)]
BoardDep = Annotated[CompletionBoard, Depends(get_board)]
ProblemsDep = Annotated[dict[str, Problem], Depends(get_problems)]
JudgeDep = Annotated[JudgeContext | None, Depends(get_judge)]
StatementsDep = Annotated[Statements, Depends(get_statements)]
KitDep = Annotated[PracticeKit, Depends(get_kit)]
SecretKeyDep = Annotated[str, Depends(get_secret_key)]
FactoryDep = Annotated[sessionmaker[Session], Depends(get_factory)]


async def get_db(platform: PlatformDep) -> AsyncIterator[Session]:
    """The request's session. Opening one does no I/O (it connects at its first query), so it
    happens on the event loop rather than in a thread of its own. Closing hands the connection
    back with a rollback: for SQLite a local call that never waits (reads hold no lock), so on
    the loop too; for a database across a network, in a thread."""
    session = platform.factory()
    try:
        yield session
    finally:
        # A route that ended its transaction in its own thread (the busiest ones do) left no
        # connection to give back: closing is then no I/O at all, so no thread either.
        if platform.engine.dialect.name == "sqlite" or not session.in_transaction():
            session.close()
        else:
            # A limiter of its own (as FastAPI does for its dependencies' exits): a thread pool
            # busy with requests that wait for connections cannot hold back this giving one back.
            await to_thread.run_sync(session.close, limiter=CapacityLimiter(1))


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


# Who holds a token or a session cookie: the row and its user in one query (an outer join tells
# a token whose user is gone from an unknown one), built once since every request asks.
_TOKEN_AND_USER = (
    select(ApiToken, User)
    .outerjoin(User, User.id == ApiToken.user_id)
    .where(ApiToken.token_hash == bindparam("hash"), ApiToken.revoked_at.is_(None))
)
_SESSION_AND_USER = (
    select(LoginSession, User)
    .outerjoin(User, User.id == LoginSession.user_id)
    .where(LoginSession.token_hash == bindparam("hash"))
)


def _by_token(platform: Platform, db: Session, raw: str, request: Request) -> Principal:
    found = db.execute(_TOKEN_AND_USER, {"hash": token_hash(platform.secret_key, raw)}).first()
    if found is None:
        raise ApiError(401, "bad_token", N_("This API token is unknown or revoked."))
    token: ApiToken = found[0]
    user: User | None = found[1]
    if user is None:
        raise ApiError(401, "bad_token", N_("The account of this API token is gone."))
    if user.disabled:
        raise ApiError(403, "account_disabled", N_("This account is disabled. Ask an administrator."))
    now = utcnow()
    # Past its expiry, or outside its scope for this route (known: this runs after routing).
    check_token(token, request.method, getattr(request.scope.get("route"), "path", None), now)
    # A write on every request would queue each API read behind the database's single writer
    # (and an fsync): the time of last use is kept to the minute.
    if token.last_used_at is None or now - token.last_used_at >= TOKEN_USE_RESOLUTION:
        token.last_used_at = now
        db.commit()
    return Principal(user, token=token)


def _by_session(platform: Platform, db: Session, cookie: str) -> Principal | None:
    found = db.execute(_SESSION_AND_USER, {"hash": token_hash(platform.secret_key, cookie)}).first()
    if found is None:
        return None
    session: LoginSession = found[0]
    user: User | None = found[1]
    # Disabling deletes the account's sessions; checking here too refuses any made in between.
    if session.expires_at <= utcnow() or user is None or user.disabled:
        return None  # an expired session is the same as none; pages ask to log in again
    return Principal(user, session=session)


def read_principal(request: Request, platform: Platform, db: Session) -> Principal | None:
    """Who sent the request (Bearer token, else session cookie); no CSRF check. Blocking: call
    it in a thread, never on the event loop."""
    auth = request.headers.get("authorization")
    if auth is not None:
        scheme, _, raw = auth.partition(" ")
        if scheme.lower() != "bearer" or not raw.strip():
            raise ApiError(401, "bad_token", N_("The Authorization header must read 'Bearer <token>'."))
        return _by_token(platform, db, raw.strip(), request)
    cookie = request.cookies.get(SESSION_COOKIE)
    return _by_session(platform, db, cookie) if cookie else None


def _read_and_release(request: Request, platform: Platform, db: Session) -> Principal | None:
    principal = read_principal(request, platform, db)
    # Nothing is left to write: end the read, so that no pooled connection is held while the
    # request waits for a thread to run its route.
    db.commit()
    return principal


async def get_principal(request: Request, platform: PlatformDep, db: DbDep) -> Principal | None:
    if "authorization" not in request.headers and not request.cookies.get(SESSION_COOKIE):
        return None  # anonymous: nothing to look up
    # The queries run in the thread pool, never on the event loop: a loop blocked on a pooled
    # connection that only the loop can give back stalls every request (it did, under load).
    principal = await run_in_threadpool(_read_and_release, request, platform, db)
    if principal is not None and principal.session is not None and request.method not in SAFE_METHODS:
        sent = request.headers.get(CSRF_HEADER) or await _form_csrf(request)
        if sent != principal.session.csrf_token:
            raise ApiError(
                403,
                "csrf_failed",
                N_("This page is out of date (its CSRF token is missing or wrong). Reload it and try again."),
            )
    return principal


OptionalPrincipalDep = Annotated[Principal | None, Depends(get_principal)]


# The checks below do no I/O: async, so FastAPI runs them on the event loop rather than
# sending each to a thread.
async def require_principal(principal: OptionalPrincipalDep) -> Principal:
    if principal is None:
        raise ApiError(401, "login_required", N_("Log in (or send an API token) first."))
    return principal


PrincipalDep = Annotated[Principal, Depends(require_principal)]


async def credentials_sent(request: Request) -> None:
    """For a route that looks its reader up itself (`read_user`): a request with neither a
    token nor a session cookie gets UserDep's 401 before its parameters are checked, as there."""
    if "authorization" not in request.headers and not request.cookies.get(SESSION_COOKIE):
        raise ApiError(401, "login_required", N_("Log in (or send an API token) first."))


def read_user(request: Request, platform: Platform, db: Session) -> User:
    """What UserDep gives a GET route (no CSRF token to check: a safe method), for a route that
    reads its reader and its rows in one trip to a thread, one transaction and one pooled
    connection: blocking, so never on the event loop."""
    principal = read_principal(request, platform, db)
    if principal is None:
        raise ApiError(401, "login_required", N_("Log in (or send an API token) first."))
    return principal.user


async def require_user(principal: PrincipalDep) -> User:
    return principal.user


UserDep = Annotated[User, Depends(require_user)]


async def optional_user(principal: OptionalPrincipalDep) -> User | None:
    return principal.user if principal else None


OptionalUserDep = Annotated[User | None, Depends(optional_user)]


async def require_admin(user: UserDep) -> User:
    """The one admin check: the API's routes depend on it, the admin page awaits it."""
    if not user.is_admin:
        raise ApiError(403, "admin_only", N_("Only administrators may do this."))
    return user


AdminDep = Annotated[User, Depends(require_admin)]


def client_address(request: Request) -> str:
    return request.client.host if request.client else "unknown"


def reader_language(request: Request, account_language: str | None = None) -> Language:
    """The language the API answers in: `?lang=`, else the first of Accept-Language that the
    site speaks, else the account's, else Chinese."""
    return language.reader_language(
        request.query_params.get("lang"), request.headers.get("accept-language", ""), account_language
    )
