from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url


@pytest.fixture
def postgres_url() -> Iterator[str]:
    """A fresh, empty PostgreSQL database for one test, dropped afterwards.

    Needs JUDGE_TEST_POSTGRES_URL (a server URL whose user may create databases). Without it
    the test skips; with it (as under .ci/run) an unreachable server fails the test.
    """
    base = os.environ.get("JUDGE_TEST_POSTGRES_URL")
    if not base:
        pytest.skip("JUDGE_TEST_POSTGRES_URL is not set")
    name = f"judge_test_{uuid.uuid4().hex[:12]}"
    admin = create_engine(base, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield make_url(base).set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            # Our own leftover connections only: an autovacuum worker on it (a superuser's
            # process, which we may not terminate) is stopped by DROP DATABASE itself.
            leftovers = (
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE datname = :n AND usename = current_user AND pid <> pg_backend_pid()"
            )
            conn.execute(text(leftovers), {"n": name})
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}"'))
        admin.dispose()
