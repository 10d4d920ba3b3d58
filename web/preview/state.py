"""What the preview knows of its packages now, and the banner every page shows from it.

The watcher (web.preview.watcher) replaces the packages when a file changes; pages read them
through `PreviewState.banner()`. The banner is a typed record: the template only words it (in
the reader's language, by gettext)."""

from __future__ import annotations

import hmac
import secrets
import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import Enum
from pathlib import Path

from judge.authoring.validate import Scope, Validation
from judge.authoring.validated import Record, latest
from web.preview.packages import Loaded

LOGIN_PATH = "/preview/login"


class Soundness(Enum):
    """The validation state of a package's current content."""

    UNVALIDATED = "unvalidated"  # no `judge validate` of these files is known
    SOUND = "sound"  # a whole validation passed
    SOUND_SO_FAR = "sound_so_far"  # a quick (or partial) validation passed
    NOT_SOUND = "not_sound"  # the newest validation failed


@dataclass(frozen=True)
class PackageBanner:
    """One package's line of the banner."""

    folder: str
    problem_id: str | None
    state: Soundness
    scope: str  # the validation's scope ("quick", "only ..."), "" for a whole one
    finished_at: str | None  # ISO 8601 in UTC, for <time datetime> (the page shows local time)
    failed: tuple[str, ...]  # the checks that failed
    load_error: str | None
    statement_notes: tuple[str, ...]
    missing_statements: tuple[str, ...]  # statement.en.md (its readers then see the Chinese)
    command: str  # what to run next


@dataclass(frozen=True)
class Banner:
    version: str
    packages: tuple[PackageBanner, ...]


def failed_checks(record: Record) -> tuple[str, ...]:
    """The failed checks of a stored validation, each with the first line of what it said."""
    try:
        checks = Validation.from_dict(record.report, Scope()).checks
    except (KeyError, TypeError, ValueError):  # a record of another shape: it is only a cache
        checks = []
    found = [
        f"{c.name}: {c.detail.strip().splitlines()[0]}" if c.detail.strip() else c.name
        for c in checks
        if not c.ok
    ]
    return tuple(found) or ("(see `judge validate`)",)


def package_banner(loaded: Loaded, cache_dir: Path, target: str) -> PackageBanner:
    record = latest(cache_dir, loaded.problem) if loaded.problem is not None else None
    if record is None:
        state = Soundness.UNVALIDATED
    elif not record.ok:
        state = Soundness.NOT_SOUND
    else:
        state = Soundness.SOUND if record.whole else Soundness.SOUND_SO_FAR
    quick = f"judge validate --quick --watch {target}"
    return PackageBanner(
        folder=loaded.folder,
        problem_id=loaded.problem.id if loaded.problem is not None else None,
        state=state,
        scope=record.scope if record is not None else "",
        finished_at=(
            datetime.fromtimestamp(record.finished_at, UTC).isoformat(timespec="seconds")
            if record is not None
            else None
        ),
        failed=failed_checks(record) if state is Soundness.NOT_SOUND and record is not None else (),
        load_error=loaded.error,
        statement_notes=loaded.statement_notes,
        missing_statements=loaded.missing_statements,
        command=f"judge validate {target}" if state is Soundness.SOUND_SO_FAR else quick,
    )


class PreviewState:
    """The preview's packages, their version and the author's one-time sign-in token; shared by
    the watcher thread and the pages (a lock guards the swap)."""

    def __init__(self, target: Path, cache_dir: Path) -> None:
        self.target = target
        self.cache_dir = cache_dir
        self.login_token = secrets.token_urlsafe(32)
        self.login_used = False
        self._lock = threading.Lock()
        self._loaded: tuple[Loaded, ...] = ()
        self._version = ""

    def replace(self, loaded: list[Loaded], version: str) -> None:
        with self._lock:
            self._loaded, self._version = tuple(loaded), version

    @property
    def version(self) -> str:
        with self._lock:
            return self._version

    @property
    def loaded(self) -> tuple[Loaded, ...]:
        with self._lock:
            return self._loaded

    def take_login(self, token: str) -> bool:
        """True once, for the token printed at start-up."""
        with self._lock:
            if self.login_used or not hmac.compare_digest(token.encode(), self.login_token.encode()):
                return False
            self.login_used = True
            return True

    def landing(self) -> str:
        """Where the printed URL leads: the problem itself when there is one package that loads."""
        loaded = self.loaded
        if len(loaded) == 1 and loaded[0].problem is not None:
            return f"/problems/{loaded[0].problem.id}"
        return "/problems"

    def banner(self) -> Banner:
        with self._lock:
            loaded, version = self._loaded, self._version
        return Banner(version, tuple(package_banner(p, self.cache_dir, str(self.target)) for p in loaded))
