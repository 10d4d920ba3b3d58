"""queue fairness: rejudged submissions are marked, and the fair claim and the per-account cap
have indexes

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-02 10:00:00.000000

`submissions.rejudged_at` is when an admin last put a judged submission back in the queue
(NULL: never; the submissions of one rejudge share it). The claim (web.submissions.queue) puts
a young rejudge behind the learners' own jobs and then gives it turns with them, counting the
submissions of one rejudge as one: the indexes find when an account (user_id, started_at) and
when a rejudge (rejudged_at, started_at) was last served with one seek each. A new run, submit
or scratch run is refused while its account already has its cap of jobs waiting or being
judged (counted on user_id, status).

Only a column and three indexes are added, so SQLite needs no table copy.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import web.db

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("submissions", sa.Column("rejudged_at", web.db.UTCDateTime(timezone=True), nullable=True))
    op.create_index("ix_submissions_user_started", "submissions", ["user_id", "started_at"])
    op.create_index("ix_submissions_user_status", "submissions", ["user_id", "status"])
    op.create_index("ix_submissions_rejudged_started", "submissions", ["rejudged_at", "started_at"])


def downgrade() -> None:
    op.drop_index("ix_submissions_rejudged_started", table_name="submissions")
    op.drop_index("ix_submissions_user_status", table_name="submissions")
    op.drop_index("ix_submissions_user_started", table_name="submissions")
    # SQLite (3.35 and later) drops a column in place: it is in no index or constraint any more.
    op.drop_column("submissions", "rejudged_at")
