"""case-insensitive unique usernames, and rate events (registrations, password checks)

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-01 09:00:00.000000

Before the unique index on lower(username) can be made, names that differ only in case (made by
concurrent registrations, which the application's own check could not stop) are made distinct:
of each group the oldest account (lowest id) keeps its name, every other is renamed to its name
cut to fit and `-<id>` (`-<id>-2`, `-<id>-3`... if even that is taken), which still matches the
username pattern ^[A-Za-z0-9_-]{3,32}$. So the upgrade never fails on an old database.
"""

from __future__ import annotations

import re

import sqlalchemy as sa
from alembic import op

import web.db

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

MAX_USERNAME = 32
_NOT_IN_A_NAME = re.compile(r"[^A-Za-z0-9_\-]")


def _renamed(name: str, user_id: int, attempt: int) -> str:
    suffix = f"-{user_id}" if attempt == 1 else f"-{user_id}-{attempt}"
    base = _NOT_IN_A_NAME.sub("_", name)[: MAX_USERNAME - len(suffix)]
    return (base or "user") + suffix


def _distinct_names(conn: sa.Connection) -> None:
    users = sa.table("users", sa.column("id", sa.Integer), sa.column("username", sa.String))
    rows = conn.execute(sa.select(users.c.id, users.c.username).order_by(users.c.id)).all()
    taken: set[str] = set()
    duplicates: list[tuple[int, str]] = []
    for user_id, name in rows:
        if name.lower() in taken:
            duplicates.append((user_id, name))
        else:
            taken.add(name.lower())  # the oldest of its case variants keeps the name
    for user_id, name in duplicates:
        attempt = 1
        while (new := _renamed(name, user_id, attempt)).lower() in taken:
            attempt += 1
        taken.add(new.lower())
        conn.execute(sa.update(users).where(users.c.id == user_id).values(username=new))


def upgrade() -> None:
    _distinct_names(op.get_bind())
    op.create_index("ix_users_username_lower", "users", [sa.text("lower(username)")], unique=True)
    op.create_table(
        "rate_events",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("address", sa.String(length=64), nullable=False),
        sa.Column("at", web.db.UTCDateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_rate_events")),
    )
    with op.batch_alter_table("rate_events", schema=None) as batch_op:
        batch_op.create_index("ix_rate_events_kind_address_at", ["kind", "address", "at"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("rate_events", schema=None) as batch_op:
        batch_op.drop_index("ix_rate_events_kind_address_at")
    op.drop_table("rate_events")
    op.drop_index("ix_users_username_lower", table_name="users")
