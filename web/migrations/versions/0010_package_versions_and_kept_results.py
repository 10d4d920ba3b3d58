"""package versions and change notes; what a rejudge did not take away

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-03 20:00:00.000000

`problem_versions.package_version` and `problem_versions.changes` hold a package's `version`
(problem.toml) and its change notes ({"3": {"zh", "en"}}); the sync writes them on every row it
makes and on the current row at each sync, so a row made before this migration gets them at the
next start if its package is unchanged, and keeps NULL otherwise (its number is not known).

`submissions.kept_verdict`, `kept_score`, `kept_max_score` and `kept_version` are the best result
a submission had before an admin's rejudge judged it lower (NULL: none), so that a rejudge never
silently lowers a learner's best; `scores.best_version` is the newest package version on which
the learner reached their best score (the problem list compares it with the current one). Every
row starts NULL: nothing was kept before, and the next judgement of a learner's problem fills
best_version.

Only nullable columns are added, with no foreign key, so SQLite needs no table copy.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("problem_versions", sa.Column("package_version", sa.Integer(), nullable=True))
    op.add_column("problem_versions", sa.Column("changes", sa.JSON(), nullable=True))
    op.add_column("submissions", sa.Column("kept_verdict", sa.String(length=4), nullable=True))
    op.add_column("submissions", sa.Column("kept_score", sa.Integer(), nullable=True))
    op.add_column("submissions", sa.Column("kept_max_score", sa.Integer(), nullable=True))
    op.add_column("submissions", sa.Column("kept_version", sa.Integer(), nullable=True))
    op.add_column("scores", sa.Column("best_version", sa.Integer(), nullable=True))


def downgrade() -> None:
    # SQLite drops a column in place (3.35+) when nothing refers to it, as here.
    op.drop_column("scores", "best_version")
    op.drop_column("submissions", "kept_version")
    op.drop_column("submissions", "kept_max_score")
    op.drop_column("submissions", "kept_score")
    op.drop_column("submissions", "kept_verdict")
    op.drop_column("problem_versions", "changes")
    op.drop_column("problem_versions", "package_version")
