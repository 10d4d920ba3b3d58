"""accounts an admin has disabled

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-04 04:20:00.000000

`users.disabled`: true refuses the account's log-ins, sessions and API tokens (web.deps). A
defaulted column with no foreign key: SQLite needs no table copy.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("users", sa.Column("disabled", sa.Boolean(), nullable=False, server_default=sa.false()))


def downgrade() -> None:
    op.drop_column("users", "disabled")
