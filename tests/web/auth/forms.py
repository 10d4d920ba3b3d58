"""What the account tests share: a fresh browser on the app in one language, its form token, the
database of the app, and the reset link's token out of its URL."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from tests.web.factories import platform_of
from web.auth.models import User
from web.language import LANGUAGE_COOKIE

NEW_PASSWORD = "a new Pass phrase 9"


def backend_url(request: pytest.FixtureRequest, backend: str, tmp_path: Path) -> str | None:
    """None: make_settings' own SQLite file; else the test PostgreSQL server."""
    if backend == "sqlite":
        return None
    url: str = request.getfixturevalue("postgres_url")
    return url


def browser(client: TestClient, lang: str) -> TestClient:
    """A new browser (its own cookies) reading `lang`."""
    reader = TestClient(client.app, follow_redirects=False)
    reader.cookies.set(LANGUAGE_COOKIE, lang)
    return reader


def form_token(page_html: str) -> str:
    found = re.search(r'name="form_token" value="([^"]+)"', page_html)
    assert found, "the form carries no form token"
    return found.group(1)


def token_of(url: str) -> str:
    found = re.search(r"/reset/([A-Za-z0-9_\-]+)$", url)
    assert found, url
    return found.group(1)


def user_named(client: TestClient, name: str) -> User:
    with platform_of(client).factory() as db:
        user = db.scalar(select(User).where(User.username == name))
        assert user is not None
        db.expunge(user)
        return user
