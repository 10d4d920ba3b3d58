"""Accounts as operations, shared by the JSON API and the HTML forms: one rule, two doors."""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Annotated

from fastapi import Response
from pydantic import BaseModel, Field, StringConstraints
from sqlalchemy import delete, func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from web.auth import invites, pruning, ratelimit, rules
from web.auth.models import ApiToken, LoginSession, TokenScope, User
from web.auth.rules import WeakPassword
from web.auth.secrets import API_TOKEN_PREFIX, hash_password, new_token, token_hash, verify_password
from web.db import utcnow
from web.deps import SESSION_COOKIE, DbText
from web.errors import N_, ApiError, not_found
from web.language import Language
from web.settings import WebSettings

Username = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_\-]{3,32}$")]
Password = Annotated[str, StringConstraints(min_length=8, max_length=256)]
# A name for the leaderboard: letters of any script, digits, spaces, _ - . (no markup, no control
# characters); "" clears it. Leading and trailing spaces are dropped.
DisplayName = Annotated[str, StringConstraints(strip_whitespace=True, max_length=32, pattern=r"^[\w .\-]*$")]
# Checked loosely (something@something.something, no spaces): the mail server is the real test.
# "" clears it.
Email = Annotated[
    DbText, StringConstraints(strip_whitespace=True, max_length=254, pattern=r"^([^@\s]+@[^@\s]+\.[^@\s]+)?$")
]


class Credentials(BaseModel):
    """What a new account is made of (the registration API's body; the form checks the same)."""

    username: Username
    password: Password
    language: Language = "zh"
    # Needed while registration is "invite" (web.auth.registration), ignored otherwise.
    invite_code: Annotated[DbText, StringConstraints(max_length=64)] | None = None


class NewToken(BaseModel):
    id: int
    name: str
    scope: TokenScope
    expires_at: datetime
    token: str = Field(description="shown once; only its hash is kept")


class TokenOut(BaseModel):
    id: int
    name: str
    prefix: str
    scope: TokenScope
    created_at: datetime
    expires_at: datetime
    last_used_at: datetime | None


def authenticate(db: Session, settings: WebSettings, address: str, username: str, password: str) -> User:
    ratelimit.check_login(db, settings, username, address)
    # Every check costs an argon2 hash (~0.1 s of a core), right or wrong: counted per address.
    ratelimit.count_password_check(db, settings, address)
    user = db.scalar(select(User).where(func.lower(User.username) == username.lower()))
    if not verify_password(user.password_hash if user else None, password) or user is None:
        ratelimit.record_failed_login(db, settings, username, address)
        raise ApiError(401, "bad_credentials", N_("Wrong username or password."))
    # Told only to whoever knows the password: a disabled name is no secret to its owner.
    if user.disabled:
        raise ApiError(403, "account_disabled", N_("This account is disabled. Ask an administrator."))
    return user


def _taken(username: str) -> ApiError:
    return ApiError(409, "username_taken", N_("The username {name} is taken."), params={"name": username})


# Why a password is refused, in the reader's words (web.auth.rules decides).
WEAK_PASSWORD: dict[WeakPassword, str] = {
    WeakPassword.BLANK: N_("A password has at least 8 characters besides the spaces at its ends."),
    WeakPassword.COMMON: N_(
        "This password is one of the most common ones, the first that anyone tries. Choose another."
    ),
    WeakPassword.REPEATED: N_(
        "This password only repeats a few characters (like aaaaaaaa or abababab). Choose another."
    ),
    WeakPassword.SEQUENCE: N_(
        "This password is a simple sequence (like 12345678, abcdefgh or qwertyui). Choose another."
    ),
    WeakPassword.USERNAME: N_("A password must not be your username, nor your username and a number."),
}


def check_new_account(username: str, password: str) -> None:
    """The rules of a new account (web.auth.rules): a name that passes for the site or its staff
    and a password anyone would guess are refused (422)."""
    if rules.is_reserved_name(username):
        message = N_("The username {name} is reserved. Choose another.")
        raise ApiError(422, "username_reserved", message, params={"name": username})
    weak = rules.weak_password(password, username)
    if weak is not None:
        raise ApiError(422, "weak_password", WEAK_PASSWORD[weak])


@dataclass(frozen=True)
class Invite:
    """The invite code a registration brings, and the key its hash is made with."""

    code: str
    secret_key: str


def create_user(
    db: Session,
    settings: WebSettings,
    address: str,
    username: str,
    password: str,
    language: str = "zh",
    invite: Invite | None = None,
) -> User:
    """A new account. Registrations are counted per address; a name is taken whatever its case,
    which the database's unique index on lower(username) settles when two arrive at once. With an
    `invite`, one use of its code is taken in the same transaction (refused: nothing is made)."""
    check_new_account(username, password)
    if db.scalar(select(User.id).where(func.lower(User.username) == username.lower())) is not None:
        raise _taken(username)
    ratelimit.count_registration(db, settings, address)
    if invite is not None:
        try:
            invites.take_use(db, invite.secret_key, invite.code)
        except ApiError:
            db.rollback()
            raise
    user = User(username=username, password_hash=hash_password(password), language=language)
    db.add(user)
    try:
        db.commit()
    except IntegrityError:
        db.rollback()  # a case variant registered between the check above and now
        raise _taken(username) from None
    return user


def start_session(
    db: Session, settings: WebSettings, secret_key: str, user: User, response: Response, https: bool
) -> LoginSession:
    """A new browser session for `user`; its cookie is set on `response`."""
    raw = new_token()
    days = settings.session_days
    session = LoginSession(
        token_hash=token_hash(secret_key, raw),
        user_id=user.id,
        csrf_token=secrets.token_urlsafe(32),
        expires_at=utcnow() + timedelta(days=days),
    )
    db.add(session)
    pruning.prune_expired_sessions(db)
    db.commit()
    response.set_cookie(
        SESSION_COOKIE,
        raw,
        max_age=days * 86400,
        httponly=True,
        samesite="lax",
        secure=settings.secure_cookies or https,
        path="/",
    )
    return session


def end_session(db: Session, session: LoginSession | None, response: Response) -> None:
    if session is not None:
        db.delete(session)
        db.commit()
    response.delete_cookie(SESSION_COOKIE, path="/")


def end_everything(db: Session, user: User, response: Response) -> None:
    """Log out everywhere: every browser session of `user` ends and every API token is revoked,
    the ones asking included, in one transaction."""
    end_sessions_and_tokens(db, user.id)
    db.commit()
    response.delete_cookie(SESSION_COOKIE, path="/")


def change_password(
    db: Session,
    settings: WebSettings,
    address: str,
    user: User,
    current: LoginSession | None,
    old_password: str,
    new_password: str,
    end_tokens: bool,
) -> None:
    """Replace `user`'s password, the old one checked as a log-in is (the same rate limits: a
    stolen session must not become a way to guess the password). Every other browser session
    ends, `current` stays; with `end_tokens` every API token is revoked too."""
    ratelimit.check_login(db, settings, user.username, address)
    ratelimit.count_password_check(db, settings, address)
    if not verify_password(user.password_hash, old_password):
        ratelimit.record_failed_login(db, settings, user.username, address)
        raise ApiError(403, "wrong_password", N_("The current password is wrong."))
    weak = rules.weak_password(new_password, user.username)
    if weak is not None:
        raise ApiError(422, "weak_password", WEAK_PASSWORD[weak])
    user.password_hash = hash_password(new_password)
    others = delete(LoginSession).where(LoginSession.user_id == user.id)
    if current is not None:
        others = others.where(LoginSession.id != current.id)
    db.execute(others)
    if end_tokens:
        revoke_all_tokens(db, user.id)
    db.commit()


def end_sessions_and_tokens(db: Session, user_id: int) -> None:
    """Every browser session of the account ends and every API token is revoked (the caller commits)."""
    db.execute(delete(LoginSession).where(LoginSession.user_id == user_id))
    revoke_all_tokens(db, user_id)


def revoke_all_tokens(db: Session, user_id: int) -> None:
    db.execute(
        update(ApiToken)
        .where(ApiToken.user_id == user_id, ApiToken.revoked_at.is_(None))
        .values(revoked_at=utcnow())
    )


def issue_token(
    db: Session,
    settings: WebSettings,
    secret_key: str,
    user: User,
    name: str,
    scope: TokenScope = TokenScope.SUBMIT,
) -> NewToken:
    """A new API token for `user`, working for `token_days`: the raw token is in the answer once,
    only its hash is kept. Whoever calls this has checked the password or a browser session."""
    raw = new_token(API_TOKEN_PREFIX)
    now = utcnow()
    token = ApiToken(
        token_hash=token_hash(secret_key, raw),
        prefix=raw[:10],
        name=name,
        user_id=user.id,
        scope=scope,
        created_at=now,
        expires_at=now + timedelta(days=settings.token_days),
    )
    db.add(token)
    pruning.prune_expired_tokens(db)
    db.commit()
    return NewToken(id=token.id, name=token.name, scope=scope, expires_at=token.expires_at, token=raw)


def active_tokens(db: Session, user: User) -> list[TokenOut]:
    """The user's tokens that still work (not revoked, not expired), oldest first; each shown by
    its prefix: the token is never kept."""
    rows = db.scalars(
        select(ApiToken)
        .where(ApiToken.user_id == user.id, ApiToken.revoked_at.is_(None), ApiToken.expires_at > utcnow())
        .order_by(ApiToken.id)
    ).all()
    return [
        TokenOut(
            id=t.id,
            name=t.name,
            prefix=t.prefix,
            scope=TokenScope(t.scope),
            created_at=t.created_at,
            expires_at=t.expires_at,
            last_used_at=t.last_used_at,
        )
        for t in rows
    ]


def revoke_token(db: Session, user: User, token_id: int) -> None:
    token = db.get(ApiToken, token_id)
    if token is None or token.user_id != user.id or token.revoked_at is not None:
        raise not_found("token")  # another's token is as unknown as a missing one
    token.revoked_at = utcnow()
    db.commit()


def set_language(db: Session, user: User, language: Language) -> None:
    user.language = language
    db.commit()


def set_board_presence(db: Session, user: User, display_name: str | None, listed: bool | None) -> None:
    """The name the leaderboard shows for `user` ("" for their username) and whether it lists them.

    A display name may not be another account's username or display name (whatever the case), so
    nobody appears on the board as someone else."""
    if display_name is not None:
        name = display_name.strip()
        if name and name.lower() != user.username.lower():
            lowered = name.lower()
            taken = db.scalar(
                select(User.id).where(
                    User.id != user.id,
                    (func.lower(User.username) == lowered) | (func.lower(User.display_name) == lowered),
                )
            )
            if taken is not None:
                raise ApiError(409, "name_taken", N_("That name is taken: choose another."))
        user.display_name = name or None
    if listed is not None:
        user.on_leaderboard = listed
    db.commit()


def set_email(db: Session, user: User, email: str) -> None:
    """Where a reset link `user` asks for is mailed ("" for nowhere)."""
    user.email = email.strip() or None
    db.commit()
