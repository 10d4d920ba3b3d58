"""One-time password reset links: issued by an admin (for anyone) or an instructor (for a learner
in one of their classes) and shown to them once, or mailed to the account on request
(web.auth.forgot). The token is random and only its keyed hash is stored; a link works once,
until it expires, and a new link voids the account's older unused ones.

Using a link sets the password (the registration rules), ends every session and API token of
the account (whoever had them no longer does), and marks the link used; the page then logs the
person in (web.pages.account).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from pydantic import BaseModel, Field
from sqlalchemy import delete, select, update
from sqlalchemy.orm import Session

from web.auth import ratelimit, rules
from web.auth.models import PasswordReset, User
from web.auth.secrets import hash_password, new_token, token_hash
from web.auth.service import WEAK_PASSWORD, end_sessions_and_tokens
from web.classes.access import teaches
from web.db import utcnow
from web.errors import N_, ApiError
from web.settings import WebSettings

RESET_PATH = "/reset/"
DEAD_LINK = N_("This link no longer works. Ask for a new one.")
NO_USER = N_("No such user.")
# Rows stay a day past their end at least (the mailed ones are counted per account within
# reset_mail_window_s, web.auth.forgot), then go.
KEEP_ENDED = timedelta(days=1)


class ResetLink(BaseModel):
    url: str = Field(description="shown once: only its hash is kept; it works once")
    expires_at: datetime


def link_url(base_url: str, token: str) -> str:
    return base_url.rstrip("/") + RESET_PATH + token


def may_issue(db: Session, issuer: User, user: User) -> bool:
    """An admin for anyone; an instructor for a learner in one of their classes; nobody else."""
    if issuer.is_admin:
        return True
    return user.role == "learner" and teaches(db, issuer, user.id)


def new_link(
    db: Session,
    settings: WebSettings,
    secret_key: str,
    user: User,
    base_url: str,
    issued_by: User | None,
) -> ResetLink:
    """A new link for `user`, voiding their older unused ones (the caller commits)."""
    now = utcnow()
    db.execute(
        update(PasswordReset)
        .where(
            PasswordReset.user_id == user.id, PasswordReset.used_at.is_(None), PasswordReset.expires_at > now
        )
        .values(expires_at=now)
        .execution_options(synchronize_session=False)
    )
    keep = max(KEEP_ENDED, timedelta(seconds=settings.reset_mail_window_s))
    db.execute(delete(PasswordReset).where(PasswordReset.expires_at < now - keep))
    raw = new_token()
    expires = now + timedelta(hours=settings.reset_link_hours)
    db.add(
        PasswordReset(
            token_hash=token_hash(secret_key, raw),
            user_id=user.id,
            issued_by=issued_by.id if issued_by is not None else None,
            created_at=now,
            expires_at=expires,
        )
    )
    return ResetLink(url=link_url(base_url, raw), expires_at=expires)


def issue(
    db: Session, settings: WebSettings, secret_key: str, issuer: User, user_id: int, base_url: str
) -> ResetLink:
    """POST /api/users/{user_id}/reset-link. An account the issuer may not reset answers as one
    that does not exist (an instructor cannot probe who is whose)."""
    user = db.get(User, user_id)
    if user is None or not may_issue(db, issuer, user):
        raise ApiError(404, "not_found", NO_USER)
    if user.disabled:
        raise ApiError(409, "account_disabled", N_("This account is disabled: enable it first."))
    link = new_link(db, settings, secret_key, user, base_url, issuer)
    db.commit()
    return link


def _live(db: Session, secret_key: str, token: str) -> PasswordReset | None:
    found = db.scalar(select(PasswordReset).where(PasswordReset.token_hash == token_hash(secret_key, token)))
    if found is None or found.used_at is not None or found.expires_at <= utcnow():
        return None
    return found


def account_of(db: Session, secret_key: str, token: str) -> User | None:
    """The account a link would reset, while it works (unknown, used, expired: None alike)."""
    found = _live(db, secret_key, token)
    user = db.get(User, found.user_id) if found is not None else None
    return user if user is not None and not user.disabled else None


def use(db: Session, settings: WebSettings, secret_key: str, address: str, token: str, password: str) -> User:
    """Set the account's password with the link `token`; every session and API token of the
    account ends and the link is used up, in one transaction. Each try is counted per address
    like a log-in (it costs a password hash). Raises 410 reset_link_dead for any link that does
    not work, saying not why; 422 weak_password."""
    ratelimit.count_password_check(db, settings, address)
    found = _live(db, secret_key, token)
    user = db.get(User, found.user_id) if found is not None else None
    if found is None or user is None or user.disabled:
        raise ApiError(410, "reset_link_dead", DEAD_LINK)
    weak = rules.weak_password(password, user.username)
    if weak is not None:
        raise ApiError(422, "weak_password", WEAK_PASSWORD[weak])
    # Marked used only if it still works: of two tries at once (or a try and a new link voiding
    # this one), one wins.
    used = db.execute(
        update(PasswordReset)
        .where(
            PasswordReset.id == found.id, PasswordReset.used_at.is_(None), PasswordReset.expires_at > utcnow()
        )
        .values(used_at=utcnow())
        .execution_options(synchronize_session=False)
    )
    if getattr(used, "rowcount", 0) != 1:
        db.rollback()
        raise ApiError(410, "reset_link_dead", DEAD_LINK)
    user.password_hash = hash_password(password)
    end_sessions_and_tokens(db, user.id)
    db.commit()
    return user
