"""Accounts: users, browser sessions, API tokens, and the attempts that rate limits count."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from sqlalchemy import ForeignKey, Index, String, false, func, true
from sqlalchemy.orm import Mapped, mapped_column

from web.db import Base, UTCDateTime, one_of, utcnow

ROLES = ("learner", "instructor", "admin")


class User(Base):
    __tablename__ = "users"

    id: Mapped[int] = mapped_column(primary_key=True)
    username: Mapped[str] = mapped_column(String(32), unique=True)
    # One account per name whatever its case ("racer" and "Racer" are one name): the database
    # decides, so concurrent registrations of case variants cannot both succeed. SQLAlchemy cannot
    # reflect an expression index on SQLite: a batch migration of users there must create it again.
    __table_args__ = (Index("ix_users_username_lower", func.lower(username), unique=True),)
    password_hash: Mapped[str] = mapped_column(String(200))
    role: Mapped[str] = mapped_column(String(16), default="learner")
    language: Mapped[str] = mapped_column(String(8), default="zh")
    # How the public leaderboard shows the account: under this name instead of the username
    # (None: the username), or not at all.
    display_name: Mapped[str | None] = mapped_column(String(32), default=None)
    # The database's default only (no Python one): rows written by code that predates the column
    # (an older worker during a rolling upgrade, the migration tests) still insert.
    on_leaderboard: Mapped[bool] = mapped_column(server_default=true())
    # Set by an admin: every log-in, session and API token of the account is refused (web.deps).
    disabled: Mapped[bool] = mapped_column(server_default=false())
    # Where a reset link the learner asks for is mailed (None: no mail; an instructor or an
    # admin issues the link instead). Never shown to anyone but the account and admins.
    email: Mapped[str | None] = mapped_column(String(254), default=None)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)

    @property
    def is_admin(self) -> bool:
        return self.role == "admin"

    @property
    def is_instructor(self) -> bool:
        """May make classes and read their members' work (admins may do whatever they may)."""
        return self.role in ("instructor", "admin")


class LoginSession(Base):
    """A browser session. The cookie holds a random token; only its keyed hash is stored."""

    __tablename__ = "login_sessions"

    id: Mapped[int] = mapped_column(primary_key=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    csrf_token: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime())


class TokenScope(StrEnum):
    """What an API token may do (`web.auth.scopes`). No token may make another token: that takes
    the password or a browser session."""

    SUBMIT = "submit"  # the practice kit and scripts: problems, submissions, scratch runs, drafts, scores
    FULL = "full"  # whatever the account may do through the API (admin routes for an admin)


class ApiToken(Base):
    """A token for scripts and the practice kit, shown once; only its keyed hash is stored. It
    works until `expires_at`, its revocation or a log-out everywhere, within its `scope`."""

    __tablename__ = "api_tokens"
    __table_args__ = (one_of("scope", TokenScope),)

    id: Mapped[int] = mapped_column(primary_key=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    prefix: Mapped[str] = mapped_column(String(16))  # the first characters, to tell tokens apart
    name: Mapped[str] = mapped_column(String(64))
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    scope: Mapped[str] = mapped_column(String(16), default=TokenScope.SUBMIT)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime())
    last_used_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)


class LoginAttempt(Base):
    """Failed logins, counted per username from an address and per address by the rate limit."""

    __tablename__ = "login_attempts"
    __table_args__ = (
        Index("ix_login_attempts_username_at", "username", "at"),
        Index("ix_login_attempts_address_at", "address", "at"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    username: Mapped[str] = mapped_column(String(64))
    address: Mapped[str] = mapped_column(String(64))
    at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class RateKind(StrEnum):
    """What is counted per address besides failed logins."""

    REGISTER = "register"  # registrations
    PASSWORD = "password"  # password checks: every log-in and token request, right or wrong


class RateEvent(Base):
    """One counted registration or password check (`RateKind`) from an address."""

    __tablename__ = "rate_events"
    __table_args__ = (
        Index("ix_rate_events_kind_address_at", "kind", "address", "at"),
        one_of("kind", RateKind),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    kind: Mapped[str] = mapped_column(String(16))
    address: Mapped[str] = mapped_column(String(64))
    at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class PasswordReset(Base):
    """A one-time link that sets a new password: issued by an admin or an instructor (and shown to
    them once), or mailed to the account when it asked. Only the token's keyed hash is stored; it
    works once, until `expires_at`."""

    __tablename__ = "password_resets"

    id: Mapped[int] = mapped_column(primary_key=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    # Who issued it (None: the account asked for it by mail).
    issued_by: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"), default=None)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime())
    used_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)


class InviteCode(Base):
    """A code that lets people register while registration is "invite": shown once to the admin
    who made it, stored as a keyed hash, good for `max_uses` registrations until `expires_at`."""

    __tablename__ = "invite_codes"

    id: Mapped[int] = mapped_column(primary_key=True)
    code_hash: Mapped[str] = mapped_column(String(64), unique=True)
    prefix: Mapped[str] = mapped_column(String(16))  # the first characters, to tell codes apart
    note: Mapped[str] = mapped_column(String(120), default="")
    max_uses: Mapped[int] = mapped_column(default=1)
    uses: Mapped[int] = mapped_column(default=0)
    created_by: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"), default=None)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime())
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)
