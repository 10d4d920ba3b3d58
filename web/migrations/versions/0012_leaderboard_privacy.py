"""how a learner appears on the public leaderboard

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-04 00:10:00.000000

`users.display_name`: the name the leaderboard shows instead of the username (NULL: the
username). `users.on_leaderboard`: false keeps the account off the public leaderboard. Nullable
or defaulted columns with no foreign key: SQLite needs no table copy.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("users", sa.Column("display_name", sa.String(32), nullable=True))
    op.add_column(
        "users", sa.Column("on_leaderboard", sa.Boolean(), nullable=False, server_default=sa.true())
    )


def downgrade() -> None:
    op.drop_column("users", "on_leaderboard")
    op.drop_column("users", "display_name")
