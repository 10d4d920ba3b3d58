"""Old rows of the tables that only count recent events, deleted a bounded batch at a time.

Failed logins and rate events count only within their windows, and an expired session is no
session: past that, a row is dead weight that every count scans past and the database keeps for
ever. The same goes for an API token some time past its expiry (EXPIRED_TOKENS_KEPT: until then
it is refused as expired, which says more than "unknown"). So each write to such a table also prunes
it (`web.auth.ratelimit` for failed logins and rate events, `web.auth.service.start_session`
for sessions, `web.auth.service.issue_token` for tokens): of the table's `batch` oldest rows
(by id, which grows with time), those that are stale go. A write thus costs at most `batch`
more index reads however large the table is, and an old backlog drains by up to `batch` rows a
write, in the write's own transaction (no thread, and nothing to run on a server that is idle).
"""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import ColumnElement, delete, select
from sqlalchemy.orm import InstrumentedAttribute, Session

from web.auth.models import ApiToken, LoginSession
from web.db import utcnow

PRUNE_BATCH = 100
EXPIRED_TOKENS_KEPT = timedelta(days=30)


def prune(
    db: Session, table_id: InstrumentedAttribute[int], stale: ColumnElement[bool], batch: int = PRUNE_BATCH
) -> int:
    """Delete the rows among the `batch` oldest of `table_id`'s table that are `stale`; how many
    went. In the caller's transaction: its commit makes them go with its own write."""
    # Rows another writer is pruning right now are skipped (PostgreSQL; SQLite has one writer at
    # a time anyway): two logins at once never wait on each other's deletes, nor deadlock.
    oldest = select(table_id).order_by(table_id).limit(batch).with_for_update(skip_locked=True)
    result = db.execute(
        delete(table_id.class_)
        .where(table_id.in_(oldest), stale)
        .execution_options(synchronize_session=False)
    )
    return int(result.rowcount)  # type: ignore[attr-defined]


def prune_expired_sessions(db: Session, batch: int = PRUNE_BATCH) -> int:
    return prune(db, LoginSession.id, LoginSession.expires_at <= utcnow(), batch)


def prune_expired_tokens(db: Session, batch: int = PRUNE_BATCH) -> int:
    """Tokens EXPIRED_TOKENS_KEPT past their expiry, revoked or not: they can never be used again."""
    return prune(db, ApiToken.id, ApiToken.expires_at <= utcnow() - EXPIRED_TOKENS_KEPT, batch)
