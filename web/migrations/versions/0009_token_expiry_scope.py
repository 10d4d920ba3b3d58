"""API tokens get an expiry and a scope

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-03 12:00:00.000000

`api_tokens.expires_at` is when a token stops working (a new token works for JUDGE_TOKEN_DAYS);
`api_tokens.scope` is what it may do (`submit`: the practice kit's routes; `full`: whatever its
account may do; web.auth.scopes), with a CHECK named ck_api_tokens_scope that spells the values
out, as 0004 does. Tokens made before this migration could do anything and never expired: they
get the narrow scope, which is all the practice kit needs, and expire EXISTING_TOKEN_DAYS after
the upgrade (not after their making), so that a kit in use keeps working for a month and its
owner has time to make a new token.

The columns are added first (expires_at may be NULL until every row has its value), then made
NOT NULL and given the CHECK: SQLite cannot do that to a table, so batch mode copies
`api_tokens` (no other table refers to it, so the copy cascades into nothing, whatever the
foreign keys pragma says).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import sqlalchemy as sa
from alembic import op

import web.db

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

EXISTING_TOKEN_DAYS = 30
SCOPES = ("submit", "full")
CHECK = "ck_api_tokens_scope"
# Batch mode reflects the table it copies; without this it also reflects the tables its foreign
# keys name, users among them, whose expression index SQLite cannot reflect (a warning).
_REFLECT = {"resolve_fks": False}


def upgrade() -> None:
    with op.batch_alter_table("api_tokens", schema=None, reflect_kwargs=_REFLECT) as batch_op:
        # The server default gives every existing row the narrow scope; it goes again below (the
        # model sets the scope of each new token itself).
        batch_op.add_column(sa.Column("scope", sa.String(length=16), nullable=False, server_default="submit"))
        batch_op.add_column(sa.Column("expires_at", web.db.UTCDateTime(timezone=True), nullable=True))
    tokens = sa.table("api_tokens", sa.column("expires_at", web.db.UTCDateTime(timezone=True)))
    op.execute(tokens.update().values(expires_at=datetime.now(UTC) + timedelta(days=EXISTING_TOKEN_DAYS)))
    with op.batch_alter_table("api_tokens", schema=None, reflect_kwargs=_REFLECT) as batch_op:
        batch_op.alter_column("expires_at", existing_type=web.db.UTCDateTime(timezone=True), nullable=False)
        batch_op.alter_column(
            "scope", existing_type=sa.String(length=16), existing_nullable=False, server_default=None
        )
        allowed = ", ".join(f"'{v}'" for v in SCOPES)
        batch_op.create_check_constraint(op.f(CHECK), f"scope IN ({allowed})")


def downgrade() -> None:
    with op.batch_alter_table("api_tokens", schema=None, reflect_kwargs=_REFLECT) as batch_op:
        batch_op.drop_constraint(op.f(CHECK), type_="check")
        batch_op.drop_column("expires_at")
        batch_op.drop_column("scope")
