"""CHECK constraints for the named states: submission status and mode, event kinds, validation
states, rate event kinds

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01 12:00:00.000000

The values are spelt out here rather than read from the enums (web.submissions.models and the
others): this migration must make the constraints of its own day even after an enum has grown
(a later migration then widens the CHECK).

SQLite cannot add a constraint to a table: batch mode copies the table into a new one that has
it, drops the old one and renames the copy. Dropping `submissions` while foreign keys are
enforced would delete every submission event (ON DELETE CASCADE) and unlink the scores, so on
SQLite this runs with foreign keys off: `web.migrate.upgrade` turns them off before its
transaction (PRAGMA foreign_keys is ignored inside one) and checks them afterwards; the
migration turns them off itself when it can, and refuses to run when they are still on.
"""

from __future__ import annotations

from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

# (table, column, the values allowed), each made a CHECK named ck_<table>_<column>.
CHECKS = [
    ("submissions", "status", ("queued", "running", "done")),
    ("submissions", "mode", ("run", "submit")),
    ("submission_events", "kind", ("queued", "claimed", "done", "requeued", "failed", "rejudge")),
    ("problem_validations", "status", ("running", "sound", "unsound", "error")),
    ("rate_events", "kind", ("register", "password")),
]


def _without_foreign_keys_on_sqlite() -> None:
    bind = op.get_bind()
    if bind.dialect.name != "sqlite":
        return
    bind.exec_driver_sql("PRAGMA foreign_keys=OFF")  # takes effect only outside a transaction
    if bind.exec_driver_sql("PRAGMA foreign_keys").scalar():
        raise RuntimeError(
            "SQLite enforces foreign keys in this transaction, so copying the submissions table "
            "would delete every submission event: upgrade with web.migrate.upgrade (judge db "
            "upgrade), which turns them off first"
        )


# Batch mode reflects the table it copies; without this it also reflects the tables its foreign
# keys name, users among them, whose expression index SQLite cannot reflect (a warning).
_REFLECT = {"resolve_fks": False}


def _tables() -> dict[str, list[tuple[str, tuple[str, ...]]]]:
    by_table: dict[str, list[tuple[str, tuple[str, ...]]]] = {}
    for table, column, values in CHECKS:
        by_table.setdefault(table, []).append((column, values))
    return by_table


def upgrade() -> None:
    _without_foreign_keys_on_sqlite()
    for table, checks in _tables().items():
        with op.batch_alter_table(table, schema=None, reflect_kwargs=_REFLECT) as batch_op:
            for column, values in checks:
                allowed = ", ".join(f"'{v}'" for v in values)
                batch_op.create_check_constraint(op.f(f"ck_{table}_{column}"), f"{column} IN ({allowed})")


def downgrade() -> None:
    _without_foreign_keys_on_sqlite()
    for table, checks in _tables().items():
        with op.batch_alter_table(table, schema=None, reflect_kwargs=_REFLECT) as batch_op:
            for column, _values in checks:
                batch_op.drop_constraint(op.f(f"ck_{table}_{column}"), type_="check")
