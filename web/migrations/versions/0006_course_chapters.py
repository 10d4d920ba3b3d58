"""the course on problem versions: chapter number, names and place, prerequisites

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01 21:40:00.000000

Nullable and without server defaults: the next problem sync fills them on every current version
(a version loaded before this migration reads as a chapter outside the course until then).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

COLUMNS = (
    ("chapter_number", sa.Integer()),
    ("chapter_zh", sa.String(length=64)),
    ("chapter_en", sa.String(length=64)),
    ("chapter_position", sa.Integer()),
    ("prerequisites", sa.JSON()),
)


def upgrade() -> None:
    with op.batch_alter_table("problem_versions", schema=None) as batch_op:
        for name, kind in COLUMNS:
            batch_op.add_column(sa.Column(name, kind, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("problem_versions", schema=None) as batch_op:
        for name, _ in reversed(COLUMNS):
            batch_op.drop_column(name)
