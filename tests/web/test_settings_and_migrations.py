"""The schema comes from Alembic and matches the models; the secret key and the sandbox
requirement keep a server that others use from starting unsafely."""

from __future__ import annotations

import logging
import os
import secrets
import stat
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import Engine, inspect

from judge.backends import BackendUnavailable
from judge.settings import REPO_ROOT
from web.db import make_engine
from web.migrate import alembic_config, is_current, upgrade
from web.models import Base
from web.platform import build_platform
from web.settings import MIN_KEY_LENGTH, InsecureSettings, WebSettings, is_weak_key, resolve_secret_key

TABLES = set(Base.metadata.tables)


def sqlite_url(tmp_path: Path, name: str = "judge.db") -> str:
    return f"sqlite:///{tmp_path / name}"


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[Engine]:
    engine = make_engine(sqlite_url(tmp_path))
    yield engine
    engine.dispose()


def table_names(engine: Engine) -> set[str]:
    return set(inspect(engine).get_table_names())


# ---------------------------------------------------------------- migrations


def test_upgrade_creates_the_schema_on_a_fresh_sqlite_file(engine: Engine) -> None:
    assert table_names(engine) == set()
    assert not is_current(engine)
    upgrade(engine)
    assert table_names(engine) == TABLES | {"alembic_version"}
    assert is_current(engine)
    upgrade(engine)  # a second start finds nothing to do
    assert is_current(engine)


def test_alembic_command_api_with_a_url_upgrades_and_downgrades(tmp_path: Path) -> None:
    url = sqlite_url(tmp_path, "cli.db")
    config = alembic_config()
    config.set_main_option("sqlalchemy.url", url)
    command.upgrade(config, "head")
    engine = make_engine(url)
    try:
        assert table_names(engine) == TABLES | {"alembic_version"}
        assert is_current(engine)
        command.downgrade(config, "base")
        assert table_names(engine) == {"alembic_version"}
        command.upgrade(config, "head")
        assert is_current(engine)
    finally:
        engine.dispose()


@pytest.mark.parametrize("dialect", ["sqlite", "postgresql"])
def test_models_and_migrations_agree(dialect: str, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    url = sqlite_url(tmp_path) if dialect == "sqlite" else request.getfixturevalue("postgres_url")
    engine = make_engine(url)
    try:
        upgrade(engine)
        with engine.connect() as conn:
            context = MigrationContext.configure(
                conn, opts={"compare_type": True, "compare_server_default": True}
            )
            diff: list[Any] = compare_metadata(context, Base.metadata)
        assert diff == [], "the models differ from the migrations; add a migration:\n" + "\n".join(
            map(repr, diff)
        )
    finally:
        engine.dispose()


# ---------------------------------------------------------------- the secret key


def settings(**values: Any) -> WebSettings:
    # Explicit values win over any JUDGE_* variables of the environment.
    values.setdefault("secret_key", None)
    values.setdefault("production", False)
    return WebSettings(**values)


def test_a_missing_key_is_generated_kept_private_and_reused(tmp_path: Path) -> None:
    key_file = tmp_path / "var" / "secret_key"
    old_umask = os.umask(0)  # the file is private whatever the umask
    try:
        key = resolve_secret_key(settings(), key_file)
    finally:
        os.umask(old_umask)
    assert len(key) >= MIN_KEY_LENGTH and not is_weak_key(key)
    assert key_file.read_text().strip() == key
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert resolve_secret_key(settings(), key_file) == key
    assert resolve_secret_key(settings(production=True), key_file) == key
    assert [p.name for p in key_file.parent.iterdir()] == ["secret_key"]  # no temporary files left
    other = tmp_path / "elsewhere" / "secret_key"
    assert resolve_secret_key(settings(), other) != key


def test_processes_starting_together_share_one_key(tmp_path: Path) -> None:
    key_file = tmp_path / "secret_key"
    barrier = threading.Barrier(8)

    def resolve(_: int) -> str:
        barrier.wait()
        return resolve_secret_key(settings(), key_file)

    with ThreadPoolExecutor(8) as pool:
        keys = set(pool.map(resolve, range(8)))
    assert keys == {key_file.read_text().strip()}


def test_an_empty_kept_key_file_is_replaced_not_used(tmp_path: Path) -> None:
    # A first run that stopped between creating the file and writing it leaves it empty.
    key_file = tmp_path / "secret_key"
    key_file.touch(mode=0o600)
    key = resolve_secret_key(settings(), key_file)
    assert len(key) >= MIN_KEY_LENGTH
    assert resolve_secret_key(settings(), key_file) == key


def test_a_weak_kept_key_is_refused_in_production(tmp_path: Path) -> None:
    key_file = tmp_path / "secret_key"
    key_file.write_text("changeme\n")
    assert resolve_secret_key(settings(), key_file) == "changeme"
    with pytest.raises(InsecureSettings, match="weak"):
        resolve_secret_key(settings(production=True), key_file)


def test_a_configured_key_wins_over_the_kept_one(tmp_path: Path) -> None:
    key_file = tmp_path / "secret_key"
    configured = secrets.token_hex(32)
    assert resolve_secret_key(settings(secret_key=configured, production=True), key_file) == configured
    assert not key_file.exists()


@pytest.mark.parametrize(
    "weak",
    [
        "secret",
        "CHANGEME",
        "dev",
        secrets.token_hex(MIN_KEY_LENGTH // 2 - 1),  # random, but short
        "k" * 48,  # long, but no secret
        "ab" * 32,
    ],
)
def test_a_weak_or_short_key_is_refused_in_production(weak: str, tmp_path: Path) -> None:
    with pytest.raises(InsecureSettings, match="JUDGE_SECRET_KEY"):
        resolve_secret_key(settings(secret_key=weak, production=True), tmp_path / "secret_key")
    # In development the same key is accepted as it is.
    assert resolve_secret_key(settings(secret_key=weak), tmp_path / "secret_key") == weak


def test_a_strong_key_is_accepted_in_production(tmp_path: Path) -> None:
    key = secrets.token_urlsafe(MIN_KEY_LENGTH)
    assert resolve_secret_key(settings(secret_key=key, production=True), tmp_path / "secret_key") == key


# ---------------------------------------------------------------- the sandbox requirement


def server_settings(tmp_path: Path, **values: Any) -> WebSettings:
    base: dict[str, Any] = {
        "database_url": sqlite_url(tmp_path),
        "secret_key": secrets.token_hex(32),
        "problems_dir": REPO_ROOT / "problems",
        "cache_dir": tmp_path / "cache",
        "backend": "local",
        "allow_unsandboxed": False,
        "production": False,
        "workers": 1,
    }
    base.update(values)
    return WebSettings(**base)


@pytest.mark.parametrize(
    ("host", "production"), [("0.0.0.0", False), ("::", False), ("192.0.2.7", False), ("127.0.0.1", True)]
)
def test_the_local_backend_is_refused_when_serving_others(
    host: str, production: bool, tmp_path: Path
) -> None:
    with pytest.raises(BackendUnavailable, match="JUDGE_ALLOW_UNSANDBOXED"):
        build_platform(server_settings(tmp_path, production=production), host)


@pytest.mark.parametrize("host", ["0.0.0.0", "127.0.0.1"])
def test_allow_unsandboxed_lets_it_start_with_a_warning(host: str, tmp_path: Path) -> None:
    platform = build_platform(server_settings(tmp_path, allow_unsandboxed=True, production=True), host)
    try:
        assert platform.pool is not None and platform.backend_name == "local"
        assert any("sandbox" in w for w in platform.warnings)
    finally:
        platform.engine.dispose()


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "::1"])
def test_the_local_backend_on_loopback_starts_with_a_warning(host: str, tmp_path: Path) -> None:
    platform = build_platform(server_settings(tmp_path), host)
    try:
        assert platform.pool is not None and platform.backend_name == "local"
        assert any("sandbox" in w for w in platform.warnings), platform.warnings
    finally:
        platform.engine.dispose()


def test_a_server_that_judges_nothing_needs_no_sandbox(tmp_path: Path) -> None:
    # workers=0: `judge serve` beside separate `judge worker`s, which make the check themselves.
    platform = build_platform(server_settings(tmp_path, workers=0, production=True), "0.0.0.0")
    try:
        assert platform.pool is None and platform.warnings == []
    finally:
        platform.engine.dispose()


def test_build_platform_refuses_a_weak_key_in_production(tmp_path: Path) -> None:
    with pytest.raises(InsecureSettings):
        build_platform(server_settings(tmp_path, secret_key="changeme", production=True, workers=0))


def test_loading_problems_logs_no_broken_package(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.ERROR, logger="web.problems.sync"):
        platform = build_platform(server_settings(tmp_path, workers=0))
    try:
        assert "204" in platform.problems
        assert caplog.records == []
    finally:
        platform.engine.dispose()
