"""Accounts as operations, shared by the JSON API and the HTML forms: one rule, two doors."""

from __future__ import annotations

import secrets
from datetime import timedelta

from fastapi import Response
from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from web.auth import ratelimit
from web.auth.models import LoginSession, User
from web.auth.secrets import hash_password, new_token, token_hash, verify_password
from web.db import utcnow
from web.deps import SESSION_COOKIE
from web.errors import ApiError
from web.platform import Platform


def authenticate(db: Session, platform: Platform, address: str, username: str, password: str) -> User:
    ratelimit.check_login(db, platform.settings, username, address)
    # Every check costs an argon2 hash (~0.1 s of a core), right or wrong: counted per address.
    ratelimit.count_password_check(db, platform.settings, address)
    user = db.scalar(select(User).where(func.lower(User.username) == username.lower()))
    if not verify_password(user.password_hash if user else None, password) or user is None:
        ratelimit.record_failed_login(db, username, address)
        raise ApiError(401, "bad_credentials", "用户名或密码错误 wrong username or password")
    return user


def _taken(username: str) -> ApiError:
    return ApiError(409, "username_taken", f"用户名已被占用 the username {username!r} is taken")


def create_user(
    db: Session, platform: Platform, address: str, username: str, password: str, language: str = "zh"
) -> User:
    """A new account. Registrations are counted per address; a name is taken whatever its case,
    which the database's unique index on lower(username) settles when two arrive at once."""
    if db.scalar(select(User.id).where(func.lower(User.username) == username.lower())) is not None:
        raise _taken(username)
    ratelimit.count_registration(db, platform.settings, address)
    user = User(username=username, password_hash=hash_password(password), language=language)
    db.add(user)
    try:
        db.commit()
    except IntegrityError:
        db.rollback()  # a case variant registered between the check above and now
        raise _taken(username) from None
    return user


def start_session(
    db: Session, platform: Platform, user: User, response: Response, https: bool
) -> LoginSession:
    """A new browser session for `user`; its cookie is set on `response`."""
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
    response.set_cookie(
        SESSION_COOKIE,
        raw,
        max_age=days * 86400,
        httponly=True,
        samesite="lax",
        secure=platform.settings.secure_cookies or https,
        path="/",
    )
    return session


def end_session(db: Session, session: LoginSession | None, response: Response) -> None:
    if session is not None:
        db.delete(session)
        db.commit()
    response.delete_cookie(SESSION_COOKIE, path="/")
