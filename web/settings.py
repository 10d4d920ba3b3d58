"""Settings of the web platform, from JUDGE_* environment variables."""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import Literal

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from judge.settings import REPO_ROOT

VAR_DIR = REPO_ROOT / "var"
# Keys that must never guard a production server (they appear in docs and examples).
KNOWN_WEAK_KEYS = {"", "secret", "changeme", "change-me", "dev", "development", "test", "password"}
MIN_KEY_LENGTH = 32
# A long key of a few repeated characters ("k" * 48) is no secret either.
MIN_KEY_DISTINCT_CHARS = 6


class WebSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="JUDGE_", extra="ignore")

    # A relative SQLite path is taken from the repository root, so `make serve` from
    # anywhere uses the same file.
    database_url: str = "sqlite:///var/judge.db"
    # Signs nothing on its own: it keys the HMAC under which session and API tokens are
    # stored. Unset: a random one is generated and kept in var/secret_key on first run.
    secret_key: str | None = None
    production: bool = False
    problems_dir: Path = REPO_ROOT / "problems"
    cache_dir: Path = Path.home() / ".cache" / "llm-judge"
    backend: Literal["auto", "local", "docker"] = "auto"
    allow_unsandboxed: bool = False
    startup_s: float = 30.0
    # In-process judging threads of `judge serve` (0: judge nothing here, leave it to `judge worker`).
    workers: int = Field(default=2, ge=0, le=64)
    lease_s: float = Field(default=60.0, gt=0)
    heartbeat_s: float = Field(default=10.0, gt=0)
    max_attempts: int = Field(default=3, ge=1)
    poll_s: float = Field(default=0.25, gt=0)
    max_code_bytes: int = 64 * 1024
    # Rate limits (per window): failed logins per username and per address; submissions
    # per user and per address.
    login_window_s: float = 300.0
    login_failures_per_user: int = 10
    login_failures_per_address: int = 30
    submit_window_s: float = 60.0
    submits_per_user: int = 30
    submits_per_address: int = 60
    session_days: int = 14
    # Set when the site is served over TLS (directly or behind a proxy): Secure cookies.
    secure_cookies: bool = False

    def sqlalchemy_url(self) -> str:
        prefix = "sqlite:///"
        url = self.database_url
        if url.startswith(prefix) and not url.startswith(prefix + "/") and ":memory:" not in url:
            path = REPO_ROOT / url[len(prefix) :]
            path.parent.mkdir(parents=True, exist_ok=True)
            return prefix + str(path)
        return url


class InsecureSettings(Exception):
    """The settings would run a production server unsafely."""


def is_weak_key(key: str) -> bool:
    return (
        key.lower() in KNOWN_WEAK_KEYS or len(key) < MIN_KEY_LENGTH or len(set(key)) < MIN_KEY_DISTINCT_CHARS
    )


def resolve_secret_key(settings: WebSettings, key_file: Path = VAR_DIR / "secret_key") -> str:
    """The configured key, or the kept random one (made on first run). Refuses weak keys in production."""
    if settings.secret_key is not None:
        key = settings.secret_key
        if settings.production and is_weak_key(key):
            raise InsecureSettings(
                f"JUDGE_SECRET_KEY is weak (a default, shorter than {MIN_KEY_LENGTH} characters or "
                "a few repeated ones); in production use a random one: "
                "python -c 'import secrets; print(secrets.token_hex(32))'"
            )
        return key
    kept = key_file.read_text().strip() if key_file.exists() else ""
    if not kept:
        kept = _keep_new_key(key_file)
    if settings.production and is_weak_key(kept):
        raise InsecureSettings(
            f"{key_file} holds a weak key; delete it to make a new one, or set JUDGE_SECRET_KEY"
        )
    return kept


def _keep_new_key(key_file: Path) -> str:
    """Write a random key readable by its owner only, and return the key that the file holds.

    The key is written to a private temporary file first and then linked into place, so the
    file is never seen half written, and of two processes starting at once both end up
    with the key of the one that linked first.
    """
    key_file.parent.mkdir(parents=True, exist_ok=True)
    tmp = key_file.with_name(f".{key_file.name}.{os.getpid()}.{secrets.token_hex(4)}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(secrets.token_hex(32) + "\n")
    try:
        if key_file.exists() and not key_file.read_text().strip():
            os.replace(tmp, key_file)  # an empty file left by an interrupted first run
        else:
            os.link(tmp, key_file)
    except FileExistsError:
        pass  # another process kept its key first: use that one
    finally:
        tmp.unlink(missing_ok=True)
    return key_file.read_text().strip()
