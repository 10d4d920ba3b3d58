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


# Plain ALTER TABLE, not batch mode: batch would copy problem_versions to drop a column, and
# dropping the original while SQLite enforces foreign keys would delete its validations.
# SQLite has had DROP COLUMN since 3.35.


def upgrade() -> None:
    for name, kind in COLUMNS:
        op.add_column("problem_versions", sa.Column(name, kind, nullable=True))


def downgrade() -> None:
    for name, _ in reversed(COLUMNS):
        op.drop_column("problem_versions", name)
