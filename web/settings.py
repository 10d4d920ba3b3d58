"""Settings of the web platform: the judge's settings tree (judge.settings) and the platform's
own, read from the same sources (arguments, JUDGE_* variables, the [web] table of judge.toml)."""

from __future__ import annotations

import ipaddress
import os
import secrets
from pathlib import Path
from typing import ClassVar, Literal
from urllib.parse import urlsplit

import platformdirs
from pydantic import Field, field_validator

from judge.core.errors import JudgeError
from judge.settings import APP_NAME, JudgeSettings

# Keys that must never guard a production server (they appear in docs and examples).
KNOWN_WEAK_KEYS = {"", "secret", "changeme", "change-me", "dev", "development", "test", "password"}
MIN_KEY_LENGTH = 32
# A long key of a few repeated characters ("k" * 48) is no secret either.
MIN_KEY_DISTINCT_CHARS = 6
# The most bytes JSON can spend on one byte of code: a control character is written "\u0001".
JSON_ESCAPE_FACTOR = 6
# Room in a code-carrying body for everything but the code (the other fields, the braces).
CODE_BODY_OVERHEAD = 4 * 1024


def address_list(value: str) -> list[str]:
    """The entries of a comma-separated setting, blanks dropped."""
    return [part.strip() for part in value.split(",") if part.strip()]


def _checked_addresses(value: str, setting: str, star: bool = False) -> str:
    for entry in address_list(value):
        if star and entry == "*":
            continue
        try:
            ipaddress.ip_network(entry, strict=False)
        except ValueError:
            raise ValueError(
                f"{setting}: {entry!r} is not an IP address or network (comma-separated, e.g. 127.0.0.1,::1)"
            ) from None
    return value


class WebSettings(JudgeSettings):
    file_tables: ClassVar[tuple[str, ...]] = ("judge", "web")

    # The server's own files: the SQLite database (by default), the kept secret key. Relative
    # paths are taken from the working folder; `make serve` uses var/ of the clone.
    data_dir: Path = Field(default_factory=lambda: Path(platformdirs.user_data_dir(APP_NAME)))
    # A relative SQLite path is taken from data_dir, so the server finds the same file
    # whichever folder it is started from.
    database_url: str = "sqlite:///judge.db"
    # Signs nothing on its own: it keys the HMAC under which session and API tokens are
    # stored. Unset: a random one is generated and kept in data_dir/secret_key on first run.
    secret_key: str | None = None
    production: bool = False
    # In-process judging threads of `judge serve` (0: judge nothing here, leave it to `judge worker`).
    workers: int = Field(default=2, ge=0, le=64)
    # Judging threads of each `judge worker` process (its --threads overrides it).
    worker_threads: int = Field(default=2, ge=1, le=64)
    lease_s: float = Field(default=60.0, gt=0)
    heartbeat_s: float = Field(default=10.0, gt=0)
    max_attempts: int = Field(default=3, ge=1)
    # How often an idle worker looks at the queue when no notice woke it; on PostgreSQL, whose
    # notices reach every host, only every notified_poll_s (for leases that ran out).
    poll_s: float = Field(default=0.25, gt=0)
    notified_poll_s: float = Field(default=2.0, gt=0)
    # The fair queue (web.judging.queue): an account's own jobs (runs, submits, scratch
    # runs) waiting or being judged at once; one more is refused (429 too_many_jobs) until one
    # is done, so that no account fills the queue. Rejudges are not counted.
    jobs_per_user: int = Field(default=8, ge=1)
    # A rejudge waits behind the learners' own jobs for queue_aging_s, then takes turns with
    # them, so that an old rejudge is judged even while new runs keep coming; within an account
    # a submit that has waited as long is no longer put behind its runs.
    queue_aging_s: float = Field(default=60.0, gt=0)
    max_code_bytes: int = Field(default=64 * 1024, gt=0)
    # Request bodies, refused (413) before they are read: the routes that carry code get
    # max_code_body_bytes, the log-in and registration routes (API and forms) the auth cap,
    # every other route the general one.
    max_body_bytes: int = Field(default=16 * 1024, gt=0)
    max_auth_body_bytes: int = Field(default=4 * 1024, gt=0)
    # Rate limits (per window): failed logins per username from one address and per address;
    # submissions per user and per address; registrations and password checks (every log-in
    # and token request, right or wrong) per address. Generous enough for a classroom behind
    # one NAT address.
    login_window_s: float = 300.0
    login_failures_per_user: int = 10
    login_failures_per_address: int = 30
    submit_window_s: float = 60.0
    # The scratch cell's comparisons with the reference, per learner and problem: each one shows
    # the reference's output on an input of the learner's choosing, so they are bounded in time.
    scratch_replays_per_problem: int = Field(default=48, ge=0)
    scratch_replay_window_s: float = Field(default=6 * 3600.0, gt=0)
    submits_per_user: int = 30
    submits_per_address: int = 60
    # Who may make an account: "open" (anyone, at /register or POST /api/auth/register),
    # "invite" (whoever has an invite code an admin made) or "closed" (nobody; accounts come from
    # `judge admin create`, existing ones still log in). The default until an admin picks another
    # mode on /admin (web.auth.registration).
    registration: Literal["open", "invite", "closed"] = "open"
    register_window_s: float = 3600.0
    registrations_per_address: int = 60
    password_window_s: float = 300.0
    password_checks_per_address: int = 120
    # The address learners reach this server at, written into the practice kit (kit.json).
    # Unset: `judge serve` uses its own listen address (0.0.0.0 and :: as 127.0.0.1).
    public_url: str | None = None
    # Proxies whose X-Forwarded-For / X-Forwarded-Proto are believed (comma-separated addresses
    # or networks, "*" for any). Empty: none, every request is from the address it came from.
    trusted_proxies: str = ""
    # /metrics: allowed without a token from these addresses (comma-separated addresses or
    # networks; empty: none), and from anywhere with "Authorization: Bearer <metrics_token>".
    metrics_token: str | None = None
    metrics_allow: str = "127.0.0.1,::1"
    # Where the processes of this host count for /metrics when there is more than one
    # (`judge serve --processes N`, `judge worker`s beside it): a folder on a tmpfs that is
    # emptied when the host starts (systemd's RuntimeDirectory). Unset: `judge serve --processes
    # N` makes one of its own; a lone process counts in memory.
    metrics_dir: Path | None = None
    # Web processes of `judge serve` (more than one needs PostgreSQL); `--processes` overrides it.
    processes: int = Field(default=1, ge=1, le=64)
    session_days: int = 14
    # A one-time password reset link (issued by an admin or an instructor, or mailed on request)
    # works this many hours, once.
    reset_link_hours: int = Field(default=24, ge=1, le=24 * 30)
    # Reset links mailed on request (/forgot): at most this many per account per window; the
    # asking address is counted with the password checks.
    reset_mails_per_account: int = Field(default=3, ge=1)
    reset_mail_window_s: float = Field(default=3600.0, gt=0)
    # Mail (reset links on request). Unset smtp_host: no mail, and /login offers no "Forgot".
    smtp_host: str | None = None
    smtp_port: int = Field(default=25, ge=1, le=65535)
    smtp_from: str = ""
    smtp_user: str | None = None
    smtp_password: str | None = None
    smtp_starttls: bool = False
    # How long one SMTP conversation may wait on the server (it runs after the answer is sent).
    smtp_timeout_s: float = Field(default=10.0, gt=0)
    # API tokens work this many days from their making (then the kit asks for a new one); a
    # token is also ended by its revocation and by a log-out everywhere.
    token_days: int = Field(default=30, ge=1, le=3650)
    # Slow clients (web.serving): a request's line and headers must all arrive within
    # header_timeout_s of the connection opening (or of the previous answer on a kept-alive
    # connection), and its body within body_timeout_s of its head; else the connection is closed.
    # keep_alive_s: how long an idle kept-alive connection is kept (uvicorn's timeout_keep_alive).
    header_timeout_s: float = Field(default=10.0, gt=0)
    body_timeout_s: float = Field(default=60.0, gt=0)
    keep_alive_s: int = Field(default=5, ge=1)
    # Set when the site is served over TLS (directly or behind a proxy): Secure cookies.
    secure_cookies: bool = False

    @field_validator("data_dir")
    @classmethod
    def _absolute(cls, value: Path) -> Path:
        return value.expanduser().resolve()

    @field_validator("trusted_proxies")
    @classmethod
    def _proxies(cls, value: str) -> str:
        return _checked_addresses(value, "JUDGE_TRUSTED_PROXIES", star=True)

    @field_validator("metrics_allow")
    @classmethod
    def _metrics_allow(cls, value: str) -> str:
        return _checked_addresses(value, "JUDGE_METRICS_ALLOW")

    @field_validator("public_url")
    @classmethod
    def _public_url(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        value = value.strip().rstrip("/")
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.hostname or parts.query or parts.fragment:
            raise ValueError(f"JUDGE_PUBLIC_URL must be an http:// or https:// URL, not {value!r}")
        return value

    @property
    def max_code_body_bytes(self) -> int:
        """The body cap of the routes that carry code: max_code_bytes of code fits whatever its
        escaping, so no code that the code cap accepts is refused for its body."""
        return self.max_code_bytes * JSON_ESCAPE_FACTOR + CODE_BODY_OVERHEAD

    def trusted_proxy_list(self) -> list[str]:
        """The proxies as uvicorn takes them: "*" alone, networks written strictly ("10.0.0.1/8"
        would be a name, not a network, to uvicorn)."""
        entries = address_list(self.trusted_proxies)
        if "*" in entries:
            return ["*"]
        return [str(ipaddress.ip_network(e, strict=False)) if "/" in e else e for e in entries]

    def sqlalchemy_url(self) -> str:
        prefix = "sqlite:///"
        url = self.database_url
        if url.startswith(prefix) and not url.startswith(prefix + "/") and ":memory:" not in url:
            path = self.data_dir / url[len(prefix) :]
            path.parent.mkdir(parents=True, exist_ok=True)
            return prefix + str(path)
        return url


class InsecureSettings(JudgeError):
    """The settings would run a production server unsafely."""


def is_weak_key(key: str) -> bool:
    return (
        key.lower() in KNOWN_WEAK_KEYS or len(key) < MIN_KEY_LENGTH or len(set(key)) < MIN_KEY_DISTINCT_CHARS
    )


def resolve_secret_key(settings: WebSettings, key_file: Path | None = None) -> str:
    """The configured key, or the kept random one (made on first run). Refuses weak keys in production."""
    key_file = key_file or settings.data_dir / "secret_key"
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
