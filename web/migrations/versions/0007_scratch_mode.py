"""the scratch cell: submissions of mode 'scratch' (never scored or listed) and their snippet

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01 21:45:00.000000

A scratch run goes through the queue like a Run, so that a web process without a sandbox
hands it to `judge worker` processes; the mode's CHECK is widened and the snippet gets a
column of its own (the code column keeps the solution it runs after). SQLite copies the table
to change a constraint, so this runs with foreign keys off, as 0004 does (see there).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

_REFLECT = {"resolve_fks": False}
NAME = "ck_submissions_mode"


def _without_foreign_keys_on_sqlite() -> None:
    bind = op.get_bind()
    if bind.dialect.name != "sqlite":
        return
    bind.exec_driver_sql("PRAGMA foreign_keys=OFF")
    if bind.exec_driver_sql("PRAGMA foreign_keys").scalar():
        raise RuntimeError(
            "SQLite enforces foreign keys in this transaction, so copying the submissions table "
            "would delete every submission event: upgrade with web.migrate.upgrade (judge db upgrade)"
        )


def _modes(values: tuple[str, ...], snippet: bool) -> None:
    _without_foreign_keys_on_sqlite()
    with op.batch_alter_table("submissions", schema=None, reflect_kwargs=_REFLECT) as batch_op:
        batch_op.drop_constraint(op.f(NAME), type_="check")
        allowed = ", ".join(f"'{v}'" for v in values)
        batch_op.create_check_constraint(op.f(NAME), f"mode IN ({allowed})")
        if snippet:
            batch_op.add_column(sa.Column("snippet", sa.Text(), nullable=True))
        else:
            batch_op.drop_column("snippet")


def upgrade() -> None:
    _modes(("run", "submit", "scratch"), snippet=True)


def downgrade() -> None:
    # Foreign keys go off before anything is written (the pragma is ignored inside a
    # transaction), so the scratch runs' events are deleted by hand, not by their cascade.
    _without_foreign_keys_on_sqlite()
    scratch = "SELECT id FROM submissions WHERE mode = 'scratch'"
    op.execute(f"DELETE FROM submission_events WHERE submission_id IN ({scratch})")
    op.execute("DELETE FROM submissions WHERE mode = 'scratch'")
    _modes(("run", "submit"), snippet=False)
