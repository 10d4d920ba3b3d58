"""Who may make an account (the `registration` setting): one check shared by the API route and
the register page, so that the two can never disagree."""

from __future__ import annotations

from web.errors import N_, ApiError
from web.settings import WebSettings

CLOSED_MESSAGE = N_("Registration is closed on this site; ask its administrator for an account.")


def registration_open(settings: WebSettings) -> bool:
    return settings.registration == "open"


def check_registration_open(settings: WebSettings) -> None:
    """Raises 403 registration_closed unless anyone may register."""
    if not registration_open(settings):
        raise ApiError(403, "registration_closed", CLOSED_MESSAGE)
