"""The database each judging test runs on: SQLite and PostgreSQL alike (PostgreSQL from
JUDGE_TEST_POSTGRES_URL, required under CI; tests/conftest.py's `postgres_url`)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'judging.db'}"
    url: str = request.getfixturevalue("postgres_url")
    return url
