"""Rate limits counted in the database, so they hold across restarts and web instances."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from web.auth.models import LoginAttempt
from web.db import utcnow
from web.errors import ApiError
from web.settings import WebSettings
from web.submissions.models import Submission


def _too_many(retry_s: float, what: str) -> ApiError:
    return ApiError(
        429,
        "rate_limited",
        f"请求过于频繁 too many {what}; try again in {int(retry_s)} s",
        headers={"Retry-After": str(int(retry_s))},
    )


def check_login(db: Session, settings: WebSettings, username: str, address: str) -> None:
    since = utcnow() - timedelta(seconds=settings.login_window_s)
    by_user = db.scalar(
        select(func.count()).where(LoginAttempt.username == username.lower(), LoginAttempt.at > since)
    )
    by_addr = db.scalar(select(func.count()).where(LoginAttempt.address == address, LoginAttempt.at > since))
    if (by_user or 0) >= settings.login_failures_per_user or (
        by_addr or 0
    ) >= settings.login_failures_per_address:
        raise _too_many(settings.login_window_s, "failed log-ins")


def record_failed_login(db: Session, username: str, address: str) -> None:
    db.add(LoginAttempt(username=username.lower()[:64], address=address[:64]))
    db.commit()


def check_submit(db: Session, settings: WebSettings, user_id: int, address: str) -> None:
    since = utcnow() - timedelta(seconds=settings.submit_window_s)
    by_user = db.scalar(
        select(func.count()).where(Submission.user_id == user_id, Submission.created_at > since)
    )
    by_addr = db.scalar(
        select(func.count()).where(Submission.client_address == address, Submission.created_at > since)
    )
    if (by_user or 0) >= settings.submits_per_user or (by_addr or 0) >= settings.submits_per_address:
        raise _too_many(settings.submit_window_s, "submissions")
