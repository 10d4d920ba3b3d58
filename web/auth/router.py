"""Register, log in and out (browser sessions), API tokens for scripts, who am I."""

from __future__ import annotations

import secrets
from datetime import datetime, timedelta
from typing import Annotated

from fastapi import APIRouter, Request, Response
from pydantic import BaseModel, Field, StringConstraints
from sqlalchemy import func, select

from web.auth import ratelimit
from web.auth.models import ApiToken, LoginSession, User
from web.auth.secrets import API_TOKEN_PREFIX, hash_password, new_token, token_hash, verify_password
from web.db import utcnow
from web.deps import SESSION_COOKIE, DbDep, DbText, IdPath, PlatformDep, PrincipalDep, UserDep, client_address
from web.errors import ApiError, not_found

router = APIRouter(prefix="/api", tags=["auth"])

Username = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_\-]{3,32}$")]
Password = Annotated[str, StringConstraints(min_length=8, max_length=256)]


class Credentials(BaseModel):
    username: Username
    password: Password


class LoginBody(BaseModel):
    # Not the registration pattern: a wrong name must fail as a wrong login, not a 422.
    username: Annotated[DbText, StringConstraints(min_length=1, max_length=64)]
    password: Annotated[str, StringConstraints(min_length=1, max_length=256)]


class TokenRequest(LoginBody):
    name: Annotated[DbText, StringConstraints(min_length=1, max_length=64)] = "script"


class UserOut(BaseModel):
    id: int
    username: str
    role: str
    language: str


class MeOut(UserOut):
    csrf_token: str | None = Field(
        None, description="send as X-CSRF-Token on unsafe requests with the cookie"
    )


class NewToken(BaseModel):
    id: int
    name: str
    token: str = Field(description="shown once; only its hash is kept")


class TokenOut(BaseModel):
    id: int
    name: str
    prefix: str
    created_at: datetime
    last_used_at: datetime | None


class TokenName(BaseModel):
    name: Annotated[DbText, StringConstraints(min_length=1, max_length=64)]


def _user_out(user: User) -> UserOut:
    return UserOut(id=user.id, username=user.username, role=user.role, language=user.language)


def _authenticate(db: DbDep, platform: PlatformDep, request: Request, username: str, password: str) -> User:
    address = client_address(request)
    ratelimit.check_login(db, platform.settings, username, address)
    user = db.scalar(select(User).where(func.lower(User.username) == username.lower()))
    if not verify_password(user.password_hash if user else None, password) or user is None:
        ratelimit.record_failed_login(db, username, address)
        raise ApiError(401, "bad_credentials", "用户名或密码错误 wrong username or password")
    return user


def _issue_token(db: DbDep, platform: PlatformDep, user: User, name: str) -> NewToken:
    raw = new_token(API_TOKEN_PREFIX)
    token = ApiToken(
        token_hash=token_hash(platform.secret_key, raw), prefix=raw[:10], name=name, user_id=user.id
    )
    db.add(token)
    db.commit()
    return NewToken(id=token.id, name=token.name, token=raw)


@router.post("/auth/register", status_code=201, response_model=UserOut)
def register(body: Credentials, db: DbDep) -> UserOut:
    if db.scalar(select(User.id).where(func.lower(User.username) == body.username.lower())) is not None:
        raise ApiError(409, "username_taken", f"用户名已被占用 the username {body.username!r} is taken")
    user = User(username=body.username, password_hash=hash_password(body.password))
    db.add(user)
    db.commit()
    return _user_out(user)


@router.post("/auth/token", status_code=201, response_model=NewToken)
def create_token(body: TokenRequest, request: Request, db: DbDep, platform: PlatformDep) -> NewToken:
    user = _authenticate(db, platform, request, body.username, body.password)
    return _issue_token(db, platform, user, body.name)


@router.post("/auth/login", response_model=MeOut)
def login(body: LoginBody, request: Request, response: Response, db: DbDep, platform: PlatformDep) -> MeOut:
    user = _authenticate(db, platform, request, body.username, body.password)
    raw = new_token()
    days = platform.settings.session_days
    session = LoginSession(
        token_hash=token_hash(platform.secret_key, raw),
        user_id=user.id,
        csrf_token=secrets.token_urlsafe(32),
        expires_at=utcnow() + timedelta(days=days),
    )
    db.add(session)
    db.commit()
    secure = platform.settings.secure_cookies or request.url.scheme == "https"
    response.set_cookie(
        SESSION_COOKIE, raw, max_age=days * 86400, httponly=True, samesite="lax", secure=secure, path="/"
    )
    return MeOut(**_user_out(user).model_dump(), csrf_token=session.csrf_token)


@router.post("/auth/logout", status_code=204)
def logout(principal: PrincipalDep, response: Response, db: DbDep) -> Response:
    if principal.session is not None:
        db.delete(principal.session)
        db.commit()
    response.status_code = 204
    response.delete_cookie(SESSION_COOKIE, path="/")
    return response


@router.get("/me", response_model=MeOut)
def me(principal: PrincipalDep) -> MeOut:
    csrf = principal.session.csrf_token if principal.session else None
    return MeOut(**_user_out(principal.user).model_dump(), csrf_token=csrf)


@router.get("/me/tokens", response_model=list[TokenOut])
def list_tokens(user: UserDep, db: DbDep) -> list[TokenOut]:
    rows = db.scalars(
        select(ApiToken)
        .where(ApiToken.user_id == user.id, ApiToken.revoked_at.is_(None))
        .order_by(ApiToken.id)
    ).all()
    return [
        TokenOut(id=t.id, name=t.name, prefix=t.prefix, created_at=t.created_at, last_used_at=t.last_used_at)
        for t in rows
    ]


@router.post("/me/tokens", status_code=201, response_model=NewToken)
def add_token(body: TokenName, user: UserDep, db: DbDep, platform: PlatformDep) -> NewToken:
    return _issue_token(db, platform, user, body.name)


@router.delete("/me/tokens/{token_id}", status_code=204)
def revoke_token(token_id: IdPath, user: UserDep, db: DbDep) -> Response:
    token = db.get(ApiToken, token_id)
    if token is None or token.user_id != user.id or token.revoked_at is not None:
        raise not_found("token")
    token.revoked_at = utcnow()
    db.commit()
    return Response(status_code=204)
