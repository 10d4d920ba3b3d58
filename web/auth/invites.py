"""Invite codes: while registration is "invite", an account is made only with a code an admin
made. A code is shown once to its maker and stored as a keyed hash; it is good for `max_uses`
registrations until it expires or is revoked.

A use is counted by one conditional UPDATE in the registration's own transaction: two
registrations racing for the last use cannot both pass (the database row lock orders them and the
second finds no use left), and a registration that fails later gives its use back by rolling back.
"""

from __future__ import annotations

import secrets
from datetime import datetime, timedelta
from typing import Annotated

from pydantic import BaseModel, Field, StringConstraints
from sqlalchemy import select, update
from sqlalchemy.orm import Session

from web.auth.models import InviteCode, User
from web.auth.secrets import token_hash
from web.db import utcnow
from web.deps import DbText
from web.errors import N_, ApiError

INVITE_PREFIX = "inv-"
# Typed by hand from a slide or a mail: letters and digits only, no look-alikes (0/O, 1/l/I).
ALPHABET = "23456789abcdefghjkmnpqrstuvwxyz"
CODE_CHARS = 16  # about 79 bits

BAD_INVITE = N_("This invite code does not work: it is unknown, used up, expired or revoked.")


class InviteRequest(BaseModel):
    note: Annotated[DbText, StringConstraints(strip_whitespace=True, max_length=120)] = ""
    max_uses: int = Field(1, ge=1, le=10000)
    expires_in_days: int = Field(7, ge=1, le=365)


class InviteOut(BaseModel):
    id: int
    prefix: str = Field(description="the code's first characters, to tell codes apart")
    note: str
    uses: int
    max_uses: int
    created_at: datetime
    expires_at: datetime
    revoked_at: datetime | None


class NewInvite(InviteOut):
    code: str = Field(description="shown once; only its hash is kept")


def normal_code(code: str) -> str:
    """What is hashed: a code as typed, without its spaces and case."""
    return code.strip().lower()


def create(db: Session, secret_key: str, admin: User, body: InviteRequest) -> NewInvite:
    code = INVITE_PREFIX + "".join(secrets.choice(ALPHABET) for _ in range(CODE_CHARS))
    now = utcnow()
    row = InviteCode(
        code_hash=token_hash(secret_key, normal_code(code)),
        prefix=code[: len(INVITE_PREFIX) + 4],
        note=body.note,
        max_uses=body.max_uses,
        created_by=admin.id,
        created_at=now,
        expires_at=now + timedelta(days=body.expires_in_days),
    )
    db.add(row)
    db.commit()
    return NewInvite(**InviteOut.model_validate(row, from_attributes=True).model_dump(), code=code)


def listed(db: Session) -> list[InviteOut]:
    """Every code, newest first (used-up, expired and revoked ones too: the record of who came in)."""
    rows = db.scalars(select(InviteCode).order_by(InviteCode.id.desc()))
    return [InviteOut.model_validate(row, from_attributes=True) for row in rows]


def revoke(db: Session, invite_id: int) -> InviteOut:
    row = db.get(InviteCode, invite_id)
    if row is None:
        raise ApiError(404, "not_found", N_("There is no invite code {id}."), params={"id": invite_id})
    if row.revoked_at is None:
        row.revoked_at = utcnow()
        db.commit()
    return InviteOut.model_validate(row, from_attributes=True)


def take_use(db: Session, secret_key: str, code: str) -> None:
    """Count one use of `code` in the caller's transaction (the caller commits or rolls back), or
    raise 403 bad_invite when it has none left, is unknown, expired or revoked (one answer for
    all: a guess learns nothing)."""
    taken = db.execute(
        update(InviteCode)
        .where(
            InviteCode.code_hash == token_hash(secret_key, normal_code(code)),
            InviteCode.revoked_at.is_(None),
            InviteCode.expires_at > utcnow(),
            InviteCode.uses < InviteCode.max_uses,
        )
        .values(uses=InviteCode.uses + 1)
        .execution_options(synchronize_session=False)
    )
    if getattr(taken, "rowcount", 0) != 1:
        raise ApiError(403, "bad_invite", BAD_INVITE)
