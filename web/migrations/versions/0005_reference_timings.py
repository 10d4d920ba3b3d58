"""reference timings: the reference's time per case, for the comparison shown after AC

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01 21:30:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import web.db

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "reference_timings",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("problem_version_id", sa.Integer(), nullable=False),
        sa.Column("runtime", sa.String(length=64), nullable=False),
        sa.Column("backend", sa.String(length=32), nullable=False),
        sa.Column("cases", sa.JSON(), nullable=False),
        sa.Column("measured_at", web.db.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["problem_version_id"],
            ["problem_versions.id"],
            name=op.f("fk_reference_timings_problem_version_id_problem_versions"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_reference_timings")),
        sa.UniqueConstraint("problem_version_id", "runtime", name="uq_reference_timings_version_runtime"),
    )


def downgrade() -> None:
    op.drop_table("reference_timings")
