"""A forgotten password, asked for by name or email (/forgot, when mail is configured): the
account is mailed a reset link (web.auth.resets) in its own language, if it has an email.

Whoever asks is told the same sentence whatever happened (no account, no email, too many links
already), and is told it before anything is looked up (`mail_links` runs after the answer), so
the form tells nobody which names or addresses have accounts, not even by its timing. The asking
address is counted with the password checks (web.auth.ratelimit.count_reset_request, before the
answer); each account gets at most `reset_mails_per_account` mailed links per
`reset_mail_window_s` (counted from its links, so no other record is needed).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from web.auth.mail import Mail, send
from web.auth.models import PasswordReset, User
from web.auth.resets import new_link
from web.db import utcnow
from web.errors import N_
from web.language import Language, as_language
from web.settings import WebSettings

# The accounts one address may name at once (an email shared by a family's accounts).
MAX_ACCOUNTS = 5

SUBJECT = N_("Your password reset link")
GREETING = N_("Hello {name},")
EXPLAIN = N_(
    "Someone (we hope you) asked for a new password for your account {name}. Open this link to "
    "choose one; it works once, within {hours} hours:"
)
IGNORE = N_("If you did not ask, ignore this mail: your password stays as it is.")


Translate = Callable[[Language], Callable[[str], str]]


def _accounts(db: Session, name_or_email: str) -> list[User]:
    wanted = name_or_email.strip().lower()
    if not wanted:
        return []
    column = User.email if "@" in wanted else User.username
    found = db.scalars(select(User).where(func.lower(column) == wanted).order_by(User.id).limit(MAX_ACCOUNTS))
    return [u for u in found if u.email and not u.disabled]


def _mailed_recently(db: Session, settings: WebSettings, user_id: int) -> int:
    since = utcnow() - timedelta(seconds=settings.reset_mail_window_s)
    counted = select(func.count()).where(
        PasswordReset.user_id == user_id, PasswordReset.issued_by.is_(None), PasswordReset.created_at > since
    )
    return db.scalar(counted) or 0


@dataclass(frozen=True)
class Asked:
    """One request of the form, handled after the answer is sent (`mail_links`)."""

    name_or_email: str
    base_url: str  # where the links point
    translate: Translate  # a language's gettext, for each account's own language


def mail_links(factory: sessionmaker[Session], settings: WebSettings, secret_key: str, asked: Asked) -> None:
    """After the answer (a background task, in a session of its own): a new link for each
    account named that has an email and has not had too many, mailed in its language. The
    asker's answer was sent before any of it, so its timing tells nothing either."""
    mails: list[Mail] = []
    with factory() as db:
        for user in _accounts(db, asked.name_or_email):
            if _mailed_recently(db, settings, user.id) >= settings.reset_mails_per_account:
                continue
            link = new_link(db, settings, secret_key, user, asked.base_url, issued_by=None)
            mails.append(_mail(settings, user, link.url, asked.translate))
        db.commit()
    for one in mails:
        send(settings, one)


def _mail(settings: WebSettings, user: User, url: str, translate: Translate) -> Mail:
    gettext = translate(as_language(user.language) or "zh")
    greeting = gettext(GREETING).format(name=user.username)
    explain = gettext(EXPLAIN).format(name=user.username, hours=settings.reset_link_hours)
    body = "\n\n".join((greeting, explain, url, gettext(IGNORE))) + "\n"
    return Mail(to=user.email or "", subject=gettext(SUBJECT), body=body)
