"""Site options an admin changes on /admin while the site runs (the configured value is the
default until then)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import String
from sqlalchemy.orm import Mapped, mapped_column

from web.db import Base, UTCDateTime, utcnow


class SiteOption(Base):
    """One option by name (`registration`: open | invite | closed)."""

    __tablename__ = "site_options"

    name: Mapped[str] = mapped_column(String(32), primary_key=True)
    value: Mapped[str] = mapped_column(String(200))
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    updated_by: Mapped[int | None] = mapped_column(default=None)
