"""Register, log in and out (browser sessions), API tokens for scripts, who am I."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Request, Response
from pydantic import BaseModel, Field, StringConstraints
from sqlalchemy import select

from web.auth import service
from web.auth.models import ApiToken, User
from web.auth.secrets import API_TOKEN_PREFIX, new_token, token_hash
from web.db import utcnow
from web.deps import DbDep, DbText, IdPath, PlatformDep, PrincipalDep, UserDep, client_address
from web.errors import not_found
from web.pages.i18n import Language

router = APIRouter(prefix="/api", tags=["auth"])

Username = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_\-]{3,32}$")]
Password = Annotated[str, StringConstraints(min_length=8, max_length=256)]


class Credentials(BaseModel):
    username: Username
    password: Password
    language: Language = "zh"


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


class MeUpdate(BaseModel):
    language: Language


class TokenName(BaseModel):
    name: Annotated[DbText, StringConstraints(min_length=1, max_length=64)]


def _user_out(user: User) -> UserOut:
    return UserOut(id=user.id, username=user.username, role=user.role, language=user.language)


def _issue_token(db: DbDep, platform: PlatformDep, user: User, name: str) -> NewToken:
    raw = new_token(API_TOKEN_PREFIX)
    token = ApiToken(
        token_hash=token_hash(platform.secret_key, raw), prefix=raw[:10], name=name, user_id=user.id
    )
    db.add(token)
    db.commit()
    return NewToken(id=token.id, name=token.name, token=raw)


@router.post("/auth/register", status_code=201, response_model=UserOut)
def register(body: Credentials, request: Request, db: DbDep, platform: PlatformDep) -> UserOut:
    address = client_address(request)
    return _user_out(service.create_user(db, platform, address, body.username, body.password, body.language))


@router.post("/auth/token", status_code=201, response_model=NewToken)
def create_token(body: TokenRequest, request: Request, db: DbDep, platform: PlatformDep) -> NewToken:
    user = service.authenticate(db, platform, client_address(request), body.username, body.password)
    return _issue_token(db, platform, user, body.name)


@router.post("/auth/login", response_model=MeOut)
def login(body: LoginBody, request: Request, response: Response, db: DbDep, platform: PlatformDep) -> MeOut:
    user = service.authenticate(db, platform, client_address(request), body.username, body.password)
    session = service.start_session(db, platform, user, response, https=request.url.scheme == "https")
    return MeOut(**_user_out(user).model_dump(), csrf_token=session.csrf_token)


@router.post("/auth/logout", status_code=204)
def logout(principal: PrincipalDep, response: Response, db: DbDep) -> Response:
    response.status_code = 204
    service.end_session(db, principal.session, response)
    return response


@router.get("/me", response_model=MeOut)
def me(principal: PrincipalDep) -> MeOut:
    csrf = principal.session.csrf_token if principal.session else None
    return MeOut(**_user_out(principal.user).model_dump(), csrf_token=csrf)


@router.patch("/me", response_model=MeOut)
def update_me(body: MeUpdate, principal: PrincipalDep, db: DbDep) -> MeOut:
    principal.user.language = body.language
    db.commit()
    return me(principal)


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
