"""Bring a database to the newest schema with Alembic (the only way the schema is made)."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy import Connection, Engine

# Inside the package, so that an installed judge migrates without a clone beside it.
MIGRATIONS = Path(__file__).resolve().parent / "migrations"


def alembic_config() -> Config:
    """The configuration alembic.ini would give, built here (alembic.ini at the clone's root is
    for `alembic revision` while developing, and points at the same folder)."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.set_main_option("file_template", "%%(rev)s_%%(slug)s")
    config.set_main_option("path_separator", "os")
    return config


def _sqlite_foreign_keys(connection: Connection, on: bool) -> None:
    # Outside any transaction (SQLite ignores the pragma inside one): end the one SQLAlchemy began.
    connection.exec_driver_sql(f"PRAGMA foreign_keys={'ON' if on else 'OFF'}")
    connection.commit()


def upgrade(engine: Engine) -> None:
    """Every migration up to the newest, in one transaction.

    On SQLite a migration that alters a table copies it, drops the old one and renames the copy
    (batch mode); with foreign keys enforced the drop would cascade into the tables that refer
    to it (deleting every submission event with `submissions`). So they are off while migrating
    and checked before the commit: the upgrade fails, and changes nothing, if any row is left
    pointing nowhere.
    """
    config = alembic_config()
    with engine.connect() as connection:
        sqlite = connection.dialect.name == "sqlite"
        if sqlite:
            _sqlite_foreign_keys(connection, on=False)
        try:
            with connection.begin():
                config.attributes["connection"] = connection
                command.upgrade(config, "head")
                if sqlite:
                    broken = connection.exec_driver_sql("PRAGMA foreign_key_check").all()
                    if broken:
                        raise RuntimeError(f"the migrated database has broken foreign keys: {broken[:5]}")
        finally:
            if sqlite:
                _sqlite_foreign_keys(connection, on=True)


def is_current(engine: Engine) -> bool:
    """Whether the database is at the newest migration."""
    from alembic.runtime.migration import MigrationContext
    from alembic.script import ScriptDirectory

    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    with engine.connect() as connection:
        return MigrationContext.configure(connection).get_current_revision() == head
