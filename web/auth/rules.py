"""What a new account may be called and which passwords it may not have.

Checked when an account is registered (the API and the form: `web.auth.service.create_user`),
never at log-in, so accounts made before these rules keep working; `judge admin create` is the
operator's door and may use any name. Pure functions: each returns what is wrong, or None.
"""

from __future__ import annotations

import re
from enum import StrEnum

# Names that would pass for the site or its staff. Compared without case and without '-' and '_'
# ("Sys_Admin" is "sysadmin"); a name that merely contains one ("admiral", "root2020x") is fine.
RESERVED_NAMES = frozenset(
    {
        "admin",
        "admins",
        "administrator",
        "administrators",
        "root",
        "system",
        "sysadmin",
        "sysop",
        "superuser",
        "supervisor",
        "moderator",
        "staff",
        "support",
        "helpdesk",
        "official",
        "owner",
        "operator",
        "webmaster",
        "postmaster",
        "hostmaster",
        "security",
        "judge",
        "llmjudge",
        "server",
        "daemon",
        "service",
        "anonymous",
        "nobody",
        "guest",
        "null",
        "undefined",
    }
)

MIN_PASSWORD_CHARS = 8

# The most common passwords of eight characters or more (shorter ones are refused anyway), as
# lists of leaked passwords rank them, English and Chinese; compared in lower case.
COMMON_PASSWORDS = frozenset(
    {
        "password",
        "password1",
        "password12",
        "password123",
        "passw0rd",
        "p@ssw0rd",
        "p@ssword",
        "iloveyou",
        "iloveyou1",
        "sunshine",
        "princess",
        "football",
        "baseball",
        "basketball",
        "superman",
        "starwars",
        "whatever",
        "computer",
        "internet",
        "michael1",
        "jennifer",
        "welcome1",
        "welcome123",
        "letmein1",
        "trustno1",
        "changeme",
        "changeme1",
        "admin123",
        "admin1234",
        "administrator",
        "qwerty123",
        "qwerty1234",
        "1qaz2wsx",
        "1q2w3e4r",
        "1q2w3e4r5t",
        "zaq12wsx",
        "qazwsxedc",
        "1234qwer",
        "qwer1234",
        "abc12345",
        "abc123456",
        "a1b2c3d4",
        "a12345678",
        "a123456789",
        "aa123456",
        "aa12345678",
        "qq123456",
        "123123123",
        "123321123",
        "147258369",
        "159357456",
        "11223344",
        "112233445566",
        "woaini1314",
        "woaini520",
        "5201314520",
        "1314520520",
        "woaini123",
        "iloveyou520",
        "dearbook",
        "88888888",
        "66666666",
        "password!",
        "football1",
        "monkey123",
        "dragon123",
        "master123",
        "shadow123",
        "secret123",
        "test1234",
        "testtest",
        "asdf1234",
        "zxcvbnm1",
    }
)

# Runs a password must not be a piece of: digits, the alphabet, keyboard rows and columns; each
# also read backwards.
SEQUENCES = (
    "01234567890",
    "abcdefghijklmnopqrstuvwxyz",
    "qwertyuiopasdfghjklzxcvbnm",
    "1qaz2wsx3edc4rfv5tgb6yhn7ujm8ik9ol0p",
    "qazwsxedcrfvtgbyhnujmikolp",
    "!@#$%^&*()",
)

# A unit of one to four characters said again and again: aaaaaaaa, abababab, abcabcabc.
REPEATED = re.compile(r"(.{1,4}?)\1+", re.DOTALL)


class WeakPassword(StrEnum):
    """Why a password is refused; each has its sentence (web.auth.service)."""

    BLANK = "blank"  # fewer than 8 characters once the spaces at its ends are left out
    COMMON = "common"
    REPEATED = "repeated"
    SEQUENCE = "sequence"
    USERNAME = "username"


def name_key(username: str) -> str:
    return username.lower().replace("-", "").replace("_", "")


def is_reserved_name(username: str) -> bool:
    return name_key(username) in RESERVED_NAMES


def _is_sequence(text: str) -> bool:
    return any(text in run or text in run[::-1] for run in SEQUENCES)


def weak_password(password: str, username: str) -> WeakPassword | None:
    """Why `password` is too easy to guess for `username`, or None when it is not."""
    stripped = password.strip()
    if len(stripped) < MIN_PASSWORD_CHARS:
        return WeakPassword.BLANK
    text = stripped.lower()
    name = username.lower()
    if text == name or (text.startswith(name) and text[len(name) :].isdigit()):
        return WeakPassword.USERNAME
    if text in COMMON_PASSWORDS:
        return WeakPassword.COMMON
    if REPEATED.fullmatch(text):
        return WeakPassword.REPEATED
    if _is_sequence(text):
        return WeakPassword.SEQUENCE
    return None
