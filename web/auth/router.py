"""Register, log in and out (browser sessions; log-out everywhere), API tokens for scripts, who am I."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request, Response
from pydantic import BaseModel, Field, StringConstraints

from web.auth import resets, service
from web.auth.models import TokenScope, User
from web.auth.registration import check_registration_allowed, registration_mode
from web.auth.resets import ResetLink
from web.auth.service import Credentials, DisplayName, Email, Invite, NewToken, Password, TokenOut
from web.deps import (
    DbDep,
    DbText,
    IdPath,
    PrincipalDep,
    SecretKeyDep,
    SettingsDep,
    UserDep,
    client_address,
)
from web.errors import N_, ApiError
from web.language import Language
from web.settings import WebSettings

router = APIRouter(prefix="/api", tags=["auth"])


class LoginBody(BaseModel):
    # Not the registration pattern: a wrong name must fail as a wrong login, not a 422.
    username: Annotated[DbText, StringConstraints(min_length=1, max_length=64)]
    password: Annotated[str, StringConstraints(min_length=1, max_length=256)]


SCOPE_HELP = (
    "submit (default): what the practice kit and scripts need (problems, submissions, scratch runs, "
    "drafts, scores); full: whatever the account may do through the API, admin routes for an admin"
)


class TokenRequest(LoginBody):
    name: Annotated[DbText, StringConstraints(min_length=1, max_length=64)] = "script"
    scope: TokenScope = Field(TokenScope.SUBMIT, description=SCOPE_HELP)


class UserOut(BaseModel):
    id: int
    username: str
    role: str
    language: str
    display_name: str | None = Field(None, description="the leaderboard's name for you; null: your username")
    on_leaderboard: bool = Field(True, description="false: the public leaderboard does not list you")


class MeOut(UserOut):
    email: str | None = Field(None, description="where a reset link you ask for is mailed; yours only")
    csrf_token: str | None = Field(
        None, description="send as X-CSRF-Token on unsafe requests with the cookie"
    )


class MeUpdate(BaseModel):
    """What the reader may change of their account; a field left out stays as it is."""

    language: Language | None = None
    # "" clears it (the leaderboard shows the username again).
    display_name: DisplayName | None = None
    on_leaderboard: bool | None = None
    # "" clears it (no reset link can then be mailed).
    email: Email | None = None


class PasswordChange(BaseModel):
    old_password: Annotated[str, StringConstraints(min_length=1, max_length=256)]
    new_password: Password
    end_tokens: bool = Field(False, description="also revoke every API token of the account")


class TokenName(BaseModel):
    name: Annotated[DbText, StringConstraints(min_length=1, max_length=64)]
    scope: TokenScope = Field(TokenScope.SUBMIT, description=SCOPE_HELP)


def _user_out(user: User) -> UserOut:
    return UserOut(
        id=user.id,
        username=user.username,
        role=user.role,
        language=user.language,
        display_name=user.display_name,
        on_leaderboard=user.on_leaderboard,
    )


@router.post("/auth/register", status_code=201, response_model=UserOut)
def register(
    body: Credentials, request: Request, db: DbDep, settings: SettingsDep, secret_key: SecretKeyDep
) -> UserOut:
    """While registration is "invite", invite_code is required and one of its uses is taken."""
    mode = registration_mode(db, settings)
    check_registration_allowed(mode, body.invite_code)
    invite = Invite(body.invite_code or "", secret_key) if mode == "invite" else None
    address = client_address(request)
    user = service.create_user(db, settings, address, body.username, body.password, body.language, invite)
    return _user_out(user)


@router.post("/auth/token", status_code=201, response_model=NewToken)
def create_token(
    body: TokenRequest, request: Request, db: DbDep, settings: SettingsDep, secret_key: SecretKeyDep
) -> NewToken:
    user = service.authenticate(db, settings, client_address(request), body.username, body.password)
    return service.issue_token(db, settings, secret_key, user, body.name, body.scope)


@router.post("/auth/login", response_model=MeOut)
def login(
    body: LoginBody,
    request: Request,
    response: Response,
    db: DbDep,
    settings: SettingsDep,
    secret_key: SecretKeyDep,
) -> MeOut:
    user = service.authenticate(db, settings, client_address(request), body.username, body.password)
    https = request.url.scheme == "https"
    session = service.start_session(db, settings, secret_key, user, response, https=https)
    return MeOut(**_user_out(user).model_dump(), csrf_token=session.csrf_token)


@router.post("/auth/logout", status_code=204)
def logout(
    principal: PrincipalDep,
    response: Response,
    db: DbDep,
    everywhere: Annotated[
        bool,
        Query(description="end every browser session and revoke every API token of the account"),
    ] = False,
) -> Response:
    response.status_code = 204
    if everywhere:
        service.end_everything(db, principal.user, response)
    else:
        service.end_session(db, principal.session, response)
    return response


@router.get("/me", response_model=MeOut)
def me(principal: PrincipalDep) -> MeOut:
    csrf = principal.session.csrf_token if principal.session else None
    return MeOut(**_user_out(principal.user).model_dump(), email=principal.user.email, csrf_token=csrf)


@router.patch("/me", response_model=MeOut)
def update_me(body: MeUpdate, principal: PrincipalDep, db: DbDep) -> MeOut:
    if body.language is not None:
        service.set_language(db, principal.user, body.language)
    if body.display_name is not None or body.on_leaderboard is not None:
        service.set_board_presence(db, principal.user, body.display_name, body.on_leaderboard)
    if body.email is not None:
        service.set_email(db, principal.user, body.email)
    return me(principal)


@router.post("/me/password", status_code=204)
def change_password(
    body: PasswordChange, principal: PrincipalDep, request: Request, db: DbDep, settings: SettingsDep
) -> Response:
    """Every other browser session of the account ends (this one stays); with end_tokens, every
    API token too."""
    service.change_password(
        db,
        settings,
        client_address(request),
        principal.user,
        principal.session,
        body.old_password,
        body.new_password,
        body.end_tokens,
    )
    return Response(status_code=204)


@router.get("/me/tokens", response_model=list[TokenOut])
def list_tokens(user: UserDep, db: DbDep) -> list[TokenOut]:
    return service.active_tokens(db, user)


@router.post("/me/tokens", status_code=201, response_model=NewToken)
def add_token(
    body: TokenName, principal: PrincipalDep, db: DbDep, settings: SettingsDep, secret_key: SecretKeyDep
) -> NewToken:
    # A token never makes another, whatever its scope: else one leaked token would outlive its
    # expiry and its revocation. The browser session stands for the password it was opened with.
    if principal.session is None:
        raise ApiError(
            403,
            "password_required",
            N_(
                "A new API token needs your password (POST /api/auth/token) or a logged-in browser; "
                "a token cannot make another."
            ),
        )
    return service.issue_token(db, settings, secret_key, principal.user, body.name, body.scope)


@router.delete("/me/tokens/{token_id}", status_code=204)
def revoke_token(token_id: IdPath, user: UserDep, db: DbDep) -> Response:
    service.revoke_token(db, user, token_id)
    return Response(status_code=204)


def base_url(request: Request, settings: WebSettings) -> str:
    """Where links in answers and mails point: the configured public address, else the one asked."""
    return settings.public_url or str(request.base_url).rstrip("/")


@router.post("/users/{user_id}/reset-link", status_code=201, response_model=ResetLink)
def issue_reset_link(
    user_id: IdPath,
    user: UserDep,
    request: Request,
    db: DbDep,
    settings: SettingsDep,
    secret_key: SecretKeyDep,
) -> ResetLink:
    """A one-time link that sets a new password for the account, shown once: by an admin for
    anyone, by an instructor for a learner in one of their classes (any other account: 404).
    It voids the account's older unused links."""
    return resets.issue(db, settings, secret_key, user, user_id, base_url(request, settings))
