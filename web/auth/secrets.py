"""Passwords (argon2) and random tokens stored only as keyed hashes."""

from __future__ import annotations

import hashlib
import hmac
import secrets

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

_hasher = PasswordHasher()

# A real hash to verify against when the username does not exist, so that a failed login
# takes the same time either way and does not reveal which usernames exist.
_DUMMY_HASH = _hasher.hash("not-a-password-" + secrets.token_hex(8))

API_TOKEN_PREFIX = "jdg_"


def hash_password(password: str) -> str:
    return _hasher.hash(password)


def verify_password(stored: str | None, password: str) -> bool:
    try:
        return _hasher.verify(stored or _DUMMY_HASH, password) and stored is not None
    except (VerificationError, InvalidHashError):
        return False


def new_token(prefix: str = "") -> str:
    return prefix + secrets.token_urlsafe(32)


def token_hash(secret_key: str, token: str) -> str:
    return hmac.new(secret_key.encode(), token.encode(), hashlib.sha256).hexdigest()
