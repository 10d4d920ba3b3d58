"""a judgement's progress while it runs

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-04 00:00:00.000000

`submissions.progress` is what a worker has judged so far of a running submission ({"done",
"total", "stage"}: the public cases' job, then the hidden cases'), so that a waiting learner reads
"public cases done, hidden cases running" instead of a bare clock. NULL while queued and once
judged. A nullable column with no foreign key: SQLite needs no table copy.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("submissions", sa.Column("progress", sa.JSON(), nullable=True))


def downgrade() -> None:
    op.drop_column("submissions", "progress")
