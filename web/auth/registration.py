"""Who may make an account: the effective registration mode, read by the API route, the register
page and every page's Register link through `registration_mode`, so that they can never disagree.

The `registration` setting is the default; once an admin picks a mode on /admin it is kept in
SiteOption("registration") and wins, across restarts and every web process. The register page and
the API read it from the database each time; the Register link of every page trusts this
process's last reading for a few seconds (`registration_offered`).
"""

from __future__ import annotations

import asyncio
import time
from typing import Literal, get_args
from weakref import WeakKeyDictionary

from sqlalchemy import Engine
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from web.admin.models import SiteOption
from web.auth.models import User
from web.db import utcnow
from web.errors import N_, ApiError
from web.settings import WebSettings

RegistrationMode = Literal["open", "invite", "closed"]
MODES: tuple[RegistrationMode, ...] = get_args(RegistrationMode)
OPTION = "registration"
# How long pages trust the mode this process last read for their Register link.
LINK_FRESH_S = 5.0
# The last mode read, and when, per database (tests run many apps in one process).
_last_read: WeakKeyDictionary[Engine, tuple[RegistrationMode, float]] = WeakKeyDictionary()

CLOSED_MESSAGE = N_("Registration is closed on this site; ask its administrator for an account.")
INVITE_NEEDED = N_("Registration on this site needs an invite code; ask its administrator for one.")


def _as_mode(value: str | None) -> RegistrationMode | None:
    for mode in MODES:
        if value == mode:
            return mode
    return None


def registration_mode(db: Session, settings: WebSettings) -> RegistrationMode:
    """The mode an admin chose on /admin, else the configured one."""
    option = db.get(SiteOption, OPTION)
    chosen = _as_mode(option.value if option is not None else None)
    mode = chosen if chosen is not None else settings.registration
    _remember(db, mode)
    return mode


def set_registration_mode(db: Session, admin: User, mode: RegistrationMode) -> RegistrationMode:
    option = db.get(SiteOption, OPTION)
    if option is None:
        db.add(SiteOption(name=OPTION, value=mode, updated_by=admin.id))
    else:
        option.value, option.updated_at, option.updated_by = mode, utcnow(), admin.id
    db.commit()
    _remember(db, mode)
    return mode


def offers_registration(mode: RegistrationMode) -> bool:
    """Whether pages offer a Register link (invite: the register page asks for the code)."""
    return mode != "closed"


def _remember(db: Session, mode: RegistrationMode) -> None:
    bind = db.get_bind()
    if isinstance(bind, Engine):
        _last_read[bind] = (mode, time.monotonic())


def _on_event_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def registration_offered(factory: sessionmaker[Session], settings: WebSettings) -> bool:
    """Whether every page's Register link is shown (web.pages.templating renders it for each page,
    which has no session to hand): the mode as this process last read it, read again once it is
    LINK_FRESH_S old. Never on the event loop (an error page of an async handler): there the last
    mode read, else the setting; a link is a hint, and the page it leads to reads the database."""
    engine = factory.kw.get("bind")
    known = _last_read.get(engine) if isinstance(engine, Engine) else None
    if known is not None and (time.monotonic() - known[1] < LINK_FRESH_S or _on_event_loop()):
        return offers_registration(known[0])
    if _on_event_loop():
        return offers_registration(settings.registration)
    try:
        with factory() as db:
            return offers_registration(registration_mode(db, settings))
    except SQLAlchemyError:  # the database is busy or away: the page still renders
        return offers_registration(known[0] if known is not None else settings.registration)


def check_registration_allowed(mode: RegistrationMode, invite_code: str | None) -> None:
    """Raises 403 unless a registration may go ahead in `mode`: closed refuses everyone, invite
    refuses whoever brings no code (whether the code works is settled when it is used,
    web.auth.invites.take_use)."""
    if mode == "closed":
        raise ApiError(403, "registration_closed", CLOSED_MESSAGE)
    if mode == "invite" and not (invite_code or "").strip():
        raise ApiError(403, "invite_required", INVITE_NEEDED)
