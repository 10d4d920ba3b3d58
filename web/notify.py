"""Notices between the platform's processes: a submission was queued, a submission changed, the
problems were synced.

A notice is published inside the transaction whose change it announces and goes out when that
transaction commits (never for a rollback), so a reader it wakes always finds the change.
Every process hears its own notices at once, after the commit. On PostgreSQL the notice also
goes to every other process and host through LISTEN/NOTIFY: each process keeps one listening
connection (psycopg 3) in a thread of its own. SQLite has no such channel; there, and whenever
the listening connection is down, the platform falls back to polling (workers look at the
queue every `poll_s`, long-polls re-read the database every `RECHECK_S`), as it always did.

Handlers run on the committing thread (own notices) or on the listener thread (others'), so
they must be quick and thread-safe: setting an event, waking a future, swapping a dict.
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable
from enum import StrEnum
from typing import Protocol

from sqlalchemy import Engine, event, func, select
from sqlalchemy.orm import Session, sessionmaker

log = logging.getLogger(__name__)

# The payload a handler gets after the listening connection was (re)made: notices sent while it
# was down are lost, so every handler acts as if anything might have changed.
ANYTHING = "*"
# The listening connection's longest wait before it looks whether it should stop.
LISTEN_TICK_S = 1.0
RECONNECT_FIRST_S = 0.5
RECONNECT_MAX_S = 10.0
# How the listening connection shows in pg_stat_activity.
APPLICATION_NAME = "llm-judge notices"
# Kept with the session until its transaction ends (session.info is the session's own dict).
_PENDING = "web.notify.pending"


class Topic(StrEnum):
    QUEUED = "judge_queued"  # a submission was queued (or requeued): idle workers look
    SUBMISSION = "judge_submission"  # submission <payload> changed: its long-polls re-read it
    PROBLEMS = "judge_problems"  # problems/ was synced: every process reloads its packages


Handler = Callable[[str], None]


class Notices(Protocol):
    """The seam: how the platform's parts tell each other (and other processes) what changed."""

    @property
    def shared(self) -> bool:
        """True when notices reach other processes now (PostgreSQL, listening connection up)."""
        ...

    def subscribe(self, topic: Topic, handler: Handler) -> None: ...

    def publish(self, session: Session, topic: Topic, payload: str = "", here: bool = True) -> None:
        """Announce `topic` when `session`'s transaction commits; `here=False`: to other processes
        only (this one has already acted on it)."""
        ...

    def attach(self, factory: sessionmaker[Session]) -> None:
        """Deliver this process's notices when sessions of `factory` commit."""
        ...

    def start(self) -> None: ...

    def close(self) -> None: ...


class LocalNotices:
    """Notices within this process (SQLite, and the base of the PostgreSQL kind)."""

    def __init__(self) -> None:
        self._handlers: dict[Topic, list[Handler]] = {}
        self._lock = threading.Lock()

    @property
    def shared(self) -> bool:
        return False

    def subscribe(self, topic: Topic, handler: Handler) -> None:
        with self._lock:
            self._handlers.setdefault(topic, []).append(handler)

    def publish(self, session: Session, topic: Topic, payload: str = "", here: bool = True) -> None:
        if here:
            session.info.setdefault(_PENDING, []).append((topic, payload))

    def attach(self, factory: sessionmaker[Session]) -> None:
        event.listen(factory, "after_commit", self._committed)
        event.listen(factory, "after_rollback", self._rolled_back)

    def start(self) -> None:
        return None

    def close(self) -> None:
        return None

    def deliver(self, topic: Topic, payload: str) -> None:
        with self._lock:
            handlers = list(self._handlers.get(topic, ()))
        for handler in handlers:
            try:
                handler(payload)
            except Exception:  # one handler's bug must not stop the others, nor the commit
                log.exception("notice %s %r: a handler failed", topic.value, payload)

    def deliver_everything(self) -> None:
        for topic in Topic:
            self.deliver(topic, ANYTHING)

    def _committed(self, session: Session) -> None:
        for topic, payload in session.info.pop(_PENDING, ()):
            self.deliver(topic, payload)

    def _rolled_back(self, session: Session) -> None:
        session.info.pop(_PENDING, None)


class PostgresNotices(LocalNotices):
    """LocalNotices, plus NOTIFY in the publishing transaction and LISTEN in a thread."""

    def __init__(self, conninfo: str) -> None:
        super().__init__()
        self._conninfo = conninfo
        # Who sent a notice: a process skips its own (it heard them after its commit).
        self.origin = uuid.uuid4().hex[:16]
        self._stop = threading.Event()
        self._listening = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def shared(self) -> bool:
        return self._listening.is_set()

    def publish(self, session: Session, topic: Topic, payload: str = "", here: bool = True) -> None:
        super().publish(session, topic, payload, here)
        # NOTIFY is transactional: it is sent when this transaction commits, and not at all if
        # it rolls back. The same notice twice in one transaction is sent once.
        session.execute(select(func.pg_notify(topic.value, f"{self.origin} {payload}")))

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._listen_forever, name="notices", daemon=True)
            self._thread.start()

    def wait_listening(self, timeout_s: float) -> bool:
        return self._listening.wait(timeout_s)

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(LISTEN_TICK_S + 5)
            self._thread = None

    def _listen_forever(self) -> None:
        import psycopg
        from psycopg import sql

        wait = RECONNECT_FIRST_S
        first = True
        while not self._stop.is_set():
            try:
                with psycopg.connect(
                    self._conninfo, autocommit=True, connect_timeout=10, application_name=APPLICATION_NAME
                ) as conn:
                    for topic in Topic:
                        conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(topic.value)))
                    self._listening.set()
                    wait = RECONNECT_FIRST_S
                    if not first:  # what was sent while the connection was down went unheard
                        self.deliver_everything()
                    first = False
                    while not self._stop.is_set():
                        for notice in conn.notifies(timeout=LISTEN_TICK_S):
                            self._heard(notice.channel, notice.payload)
            except Exception as exc:  # the database restarted or went away: poll, and retry
                if not self._stop.is_set():
                    log.warning(
                        "notices: the listening connection failed (%s: %s); polling until it is back",
                        type(exc).__name__,
                        exc,
                    )
            finally:
                self._listening.clear()
            self._stop.wait(wait)
            wait = min(wait * 2, RECONNECT_MAX_S)

    def _heard(self, channel: str, message: str) -> None:
        origin, _, payload = message.partition(" ")
        if origin == self.origin:
            return
        try:
            topic = Topic(channel)
        except ValueError:
            return
        self.deliver(topic, payload)


def postgres_conninfo(engine: Engine) -> str:
    """The engine's database as a libpq URL (SQLAlchemy's names its driver: postgresql+psycopg)."""
    return engine.url.set(drivername="postgresql").render_as_string(hide_password=False)


def make_notices(engine: Engine) -> Notices:
    """Notices that reach every process on PostgreSQL, this process's alone elsewhere."""
    if engine.dialect.name == "postgresql":
        return PostgresNotices(postgres_conninfo(engine))
    return LocalNotices()
