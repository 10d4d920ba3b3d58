"""a submission that could not be judged for a part its author has not solved yet

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-04 00:20:00.000000

`submissions.blocked_by`: the problem whose part the code imports and its author has no accepted
solution of (a CE before any case ran). Such a submission is no attempt: the problem stays "new"
and no score row is made for it. NULL for every other submission. A nullable column with no
foreign key: SQLite needs no table copy.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("submissions", sa.Column("blocked_by", sa.String(16), nullable=True))


def downgrade() -> None:
    op.drop_column("submissions", "blocked_by")
