"""The class tests run on both databases: `client` is the real app on a fresh SQLite file, then
on a fresh PostgreSQL database (skipped without JUDGE_TEST_POSTGRES_URL, required under .ci/run).
The browser tests here use the same browser and checked pages as tests/web/pages/."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from tests.web.factories import make_client, make_settings
from tests.web.pages.conftest import browser, page

__all__ = ["browser", "client", "database_url", "page"]


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest) -> str | None:
    if request.param == "sqlite":
        return None
    url: str = request.getfixturevalue("postgres_url")
    return url


@pytest.fixture
def client(tmp_path: Path, database_url: str | None) -> Iterator[TestClient]:
    with make_client(make_settings(tmp_path, database_url, workers=0)) as c:
        yield c
