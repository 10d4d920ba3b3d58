"""The database: engine, sessions, and the declarative base every model derives from."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import (
    CheckConstraint,
    DateTime,
    Engine,
    MetaData,
    TypeDecorator,
    create_engine,
    event,
    make_url,
)
from sqlalchemy.orm import DeclarativeBase, Session, sessionmaker

# Stable constraint names, so that migrations can name what they change.
NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


# Connections kept open to an SQLite file (an in-memory database has one per thread).
SQLITE_POOL_SIZE = 40


class UTCDateTime(TypeDecorator[datetime]):
    """Timezone-aware UTC datetimes on every database (SQLite stores naive ones)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Any) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime")
        return value.astimezone(UTC)

    def process_result_value(self, value: datetime | None, dialect: Any) -> datetime | None:
        if value is not None and value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)


def one_of(column: str, states: Iterable[StrEnum]) -> CheckConstraint:
    """A CHECK that `column` holds one of the named states (named ck_<table>_<column>), so the
    database refuses a misspelt state whoever writes it. Migrations spell the list out: a
    migration must still make the constraint of its own day when the enum has grown."""
    values = ", ".join(f"'{state.value}'" for state in states)
    return CheckConstraint(f"{column} IN ({values})", name=column)


def utcnow() -> datetime:
    return datetime.now(UTC)


def make_engine(url: str) -> Engine:
    if url.startswith("sqlite"):
        # Keep as many connections as requests can run at once (the thread pool runs 40): with
        # fewer kept, every request over the count opened a connection (and its pragmas) and
        # closed it again. An SQLite connection costs a file handle and a small page cache.
        database = make_url(url).database
        in_memory = not database or database == ":memory:" or "mode=memory" in url
        pool = {} if in_memory else {"pool_size": SQLITE_POOL_SIZE, "max_overflow": SQLITE_POOL_SIZE}
        engine = create_engine(url, connect_args={"timeout": 30, "check_same_thread": False}, **pool)

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
            # WAL lets readers run beside the one writer; foreign keys are off by default.
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA foreign_keys=ON")
            cur.execute("PRAGMA busy_timeout=30000")
            cur.close()

        return engine
    return create_engine(url, pool_pre_ping=True, pool_size=10, max_overflow=20)


def statements_on_their_own(session: Session) -> None:
    """On PostgreSQL, run each of this session's statements in a transaction of its own
    (autocommit): for the busiest reads (the problem page, a submission's status), which read a
    few rows and write at most one (a token's last use), where BEGIN and COMMIT would be two of
    their four or five round trips to the database. Call it before the session's first
    statement; the connection goes back to the pool in its usual mode. Elsewhere a no-op."""
    bind = session.get_bind()
    if bind.dialect.name == "postgresql":
        session.connection(execution_options={"isolation_level": "AUTOCOMMIT"})


def make_sessionmaker(engine: Engine) -> sessionmaker[Session]:
    return sessionmaker(engine, expire_on_commit=False)


@contextmanager
def transaction(factory: sessionmaker[Session]) -> Iterator[Session]:
    """One unit of work: committed when the block ends, rolled back if it raises."""
    with factory() as session, session.begin():
        yield session
