"""`judge serve`'s shapes (web.serving): more than one process needs PostgreSQL, and says so
before anything starts; logs never show the database's password."""

from __future__ import annotations

from pathlib import Path

import pytest

from judge.cli import UsageError
from tests.web.factories import make_settings
from web.serving import serve, shown_database


def test_more_than_one_process_on_sqlite_is_refused_before_anything_starts(tmp_path: Path) -> None:
    settings = make_settings(tmp_path)
    with pytest.raises(UsageError, match=r"--processes 2 needs PostgreSQL"):
        serve(settings, "127.0.0.1", 8000, processes=2, log_level="info", access_log=False)
    assert not (tmp_path / "judge.db").exists()  # not even migrated


def test_the_database_url_is_logged_without_its_password(tmp_path: Path) -> None:
    settings = make_settings(tmp_path, "postgresql+psycopg://judge:s3cret-pw@db.internal:5432/judge")
    shown = shown_database(settings)
    assert "s3cret-pw" not in shown and shown.startswith("postgresql+psycopg://judge:***@")
