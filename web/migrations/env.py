"""Alembic environment: the URL comes from the caller (web.migrate) or from JUDGE_DATABASE_URL."""

from __future__ import annotations

from alembic import context
from sqlalchemy import Connection

from web.db import make_engine
from web.models import Base
from web.settings import WebSettings

config = context.config
target_metadata = Base.metadata


def run_on(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        # SQLite alters tables by copying them; batch mode does that for us.
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


connection = config.attributes.get("connection")
if connection is not None:
    run_on(connection)
else:
    url = config.get_main_option("sqlalchemy.url") or WebSettings().sqlalchemy_url()
    engine = make_engine(url)
    with engine.connect() as conn:
        run_on(conn)
    engine.dispose()
