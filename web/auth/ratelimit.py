"""Rate limits counted in the database, so they hold across restarts and web instances.

Each write of a counted row also prunes the rows that have left every window
(`web.auth.pruning`), so the tables hold little more than what the limits still count.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import and_, func, or_, select
from sqlalchemy.orm import Session

from web.auth.models import LoginAttempt, RateEvent, RateKind
from web.auth.pruning import prune
from web.db import utcnow
from web.errors import N_, ApiError
from web.settings import WebSettings
from web.submissions.models import Submission


def _too_many(retry_s: float, message: str) -> ApiError:
    """`message` says what there was too much of and takes the {seconds} to wait."""
    seconds = max(1, math.ceil(retry_s))
    return ApiError(
        429,
        "rate_limited",
        message,
        headers={"Retry-After": str(seconds)},
        params={"seconds": seconds},
    )


def _wait_s(db: Session, stamp: Any, condition: Any, limit: int, since: datetime, window_s: float) -> float:
    """0 while fewer than `limit` rows match within the window; otherwise the seconds until
    enough of the oldest leave it that one more is allowed."""
    if limit <= 0:
        return window_s
    recent = select(stamp).where(condition, stamp > since)
    count = db.scalar(select(func.count()).select_from(recent.subquery())) or 0
    if count < limit:
        return 0.0
    # The row whose leaving brings the count below the limit: the (count - limit + 1)-th oldest.
    freeing: datetime | None = db.scalar(recent.order_by(stamp).offset(count - limit).limit(1))
    if freeing is None:  # it left the window since the count
        return 0.0
    return max(0.0, (freeing + timedelta(seconds=window_s) - utcnow()).total_seconds())


def check_login(db: Session, settings: WebSettings, username: str, address: str) -> None:
    """Failed logins are counted per (username, address) and per address: never per username
    alone, or anyone could lock an account's owner out by failing to log in as them."""
    window = settings.login_window_s
    since = utcnow() - timedelta(seconds=window)
    address = address[:64]
    wait = max(
        _wait_s(
            db,
            LoginAttempt.at,
            (LoginAttempt.username == username.lower()[:64]) & (LoginAttempt.address == address),
            settings.login_failures_per_user,
            since,
            window,
        ),
        _wait_s(
            db,
            LoginAttempt.at,
            LoginAttempt.address == address,
            settings.login_failures_per_address,
            since,
            window,
        ),
    )
    if wait > 0:
        raise _too_many(wait, N_("Too many failed log-ins. Try again in {seconds} s."))


def window_s(settings: WebSettings, kind: RateKind) -> float:
    """How far back events of `kind` count."""
    if kind == RateKind.REGISTER:
        return settings.register_window_s
    return settings.password_window_s


def _count_event(
    db: Session, settings: WebSettings, kind: RateKind, address: str, limit: int, message: str
) -> None:
    """Refuse (429) when `address` already made `limit` events of `kind` within the window, else
    record this one. Recorded before the work it guards, so a burst is counted as it arrives."""
    address = address[:64]
    window = window_s(settings, kind)
    now = utcnow()
    condition = (RateEvent.kind == kind) & (RateEvent.address == address)
    wait = _wait_s(db, RateEvent.at, condition, limit, now - timedelta(seconds=window), window)
    if wait > 0:
        raise _too_many(wait, message)
    db.add(RateEvent(kind=kind, address=address))
    # Each kind's rows go once they are older than that kind's window.
    stale = [
        and_(RateEvent.kind == k, RateEvent.at < now - timedelta(seconds=window_s(settings, k)))
        for k in RateKind
    ]
    prune(db, RateEvent.id, or_(*stale))
    db.commit()


def count_registration(db: Session, settings: WebSettings, address: str) -> None:
    _count_event(
        db,
        settings,
        RateKind.REGISTER,
        address,
        settings.registrations_per_address,
        N_("Too many registrations from this address. Try again in {seconds} s."),
    )


def count_password_check(db: Session, settings: WebSettings, address: str) -> None:
    _count_event(
        db,
        settings,
        RateKind.PASSWORD,
        address,
        settings.password_checks_per_address,
        N_("Too many log-ins from this address. Try again in {seconds} s."),
    )


def record_failed_login(db: Session, settings: WebSettings, username: str, address: str) -> None:
    db.add(LoginAttempt(username=username.lower()[:64], address=address[:64]))
    # Both failed-login limits count within login_window_s: older rows never count again.
    prune(db, LoginAttempt.id, LoginAttempt.at < utcnow() - timedelta(seconds=settings.login_window_s))
    db.commit()


def check_submit(db: Session, settings: WebSettings, user_id: int, address: str) -> None:
    window = settings.submit_window_s
    since = utcnow() - timedelta(seconds=window)
    wait = max(
        _wait_s(
            db, Submission.created_at, Submission.user_id == user_id, settings.submits_per_user, since, window
        ),
        _wait_s(
            db,
            Submission.created_at,
            Submission.client_address == address,
            settings.submits_per_address,
            since,
            window,
        ),
    )
    if wait > 0:
        raise _too_many(wait, N_("Too many submissions. Try again in {seconds} s."))


def count_reset_request(db: Session, settings: WebSettings, address: str) -> None:
    """A reset link asked for by mail (/forgot): counted with the password checks of the address,
    which bound the same kind of unauthenticated work."""
    _count_event(
        db,
        settings,
        RateKind.PASSWORD,
        address,
        settings.password_checks_per_address,
        N_("Too many requests from this address. Try again in {seconds} s."),
    )
