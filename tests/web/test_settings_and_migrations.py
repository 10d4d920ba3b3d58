"""The schema comes from Alembic and matches the models; the secret key and the sandbox
requirement keep a server that others use from starting unsafely."""

from __future__ import annotations

import logging
import os
import re
import secrets
import stat
import threading
import warnings
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import CheckConstraint, Engine, func, insert, inspect, select, text, update
from sqlalchemy.exc import IntegrityError

from judge.backends import BackendUnavailable
from tests.paths import REPO_ROOT
from web.auth.models import RateEvent, RateKind, TokenScope, User
from web.db import make_engine, utcnow
from web.migrate import alembic_config, is_current, upgrade
from web.models import Base
from web.platform import build_platform, is_loopback, listen_url, public_url_warning
from web.problems.models import ValidationState
from web.scores.models import Score
from web.settings import MIN_KEY_LENGTH, InsecureSettings, WebSettings, is_weak_key, resolve_secret_key
from web.submissions.models import EventKind, Mode, Submission, SubmissionEvent, SubmissionStatus

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
        with engine.connect() as conn, warnings.catch_warnings():
            if dialect == "sqlite":
                # SQLAlchemy cannot reflect SQLite's expression indexes, so autogenerate skips the
                # one on lower(username) (with these warnings); it is checked by hand below.
                warnings.filterwarnings("ignore", "Skipped unsupported reflection of expression-based index")
                warnings.filterwarnings("ignore", "autogenerate skipping metadata-specified expression-based")
            context = MigrationContext.configure(
                conn, opts={"compare_type": True, "compare_server_default": True}
            )
            diff: list[Any] = compare_metadata(context, Base.metadata)
            if dialect == "sqlite":
                sql = conn.scalar(
                    text("SELECT sql FROM sqlite_master WHERE type = 'index' AND name = :n"),
                    {"n": "ix_users_username_lower"},
                )
                assert sql is not None and "UNIQUE" in sql.upper() and "lower(username)" in sql, sql
        assert diff == [], "the models differ from the migrations; add a migration:\n" + "\n".join(
            map(repr, diff)
        )
    finally:
        engine.dispose()


USERNAME = re.compile(r"^[A-Za-z0-9_\-]{3,32}$")


@pytest.mark.parametrize("dialect", ["sqlite", "postgresql"])
def test_usernames_become_unique_whatever_their_case_on_an_old_database(
    dialect: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """A database from before the case-insensitive index may hold "racer" and "Racer": the
    upgrade keeps the oldest name and renames the others, still valid names and unique."""
    url = sqlite_url(tmp_path) if dialect == "sqlite" else request.getfixturevalue("postgres_url")
    engine = make_engine(url)
    try:
        config = alembic_config()
        with engine.begin() as conn:
            config.attributes["connection"] = conn
            command.upgrade(config, "0002")
        names = {
            1: "Racer",
            2: "racer",  # -> racer-2, but id 4 holds that: racer-2-2
            3: "RACER",  # -> RACER-3, but id 8 holds Racer-3: RACER-3-2
            4: "racer-2",
            5: "L" * 32,
            6: "l" * 32,  # cut to make room: 30 l's and -6
            7: "bob",
            8: "Racer-3",
        }
        with engine.begin() as conn:
            conn.execute(
                insert(User),
                [
                    {"id": i, "username": n, "password_hash": "x", "role": "learner", "language": "zh"}
                    | {"created_at": datetime(2026, 1, 1, tzinfo=UTC)}
                    for i, n in names.items()
                ],
            )
        upgrade(engine)
        assert is_current(engine)
        with engine.connect() as conn:
            after = {user_id: name for user_id, name in conn.execute(select(User.id, User.username))}
        assert after == {
            1: "Racer",
            2: "racer-2-2",
            3: "RACER-3-2",
            4: "racer-2",
            5: "L" * 32,
            6: "l" * 30 + "-6",
            7: "bob",
            8: "Racer-3",
        }
        assert all(USERNAME.match(name) for name in after.values())
        # From now on the database itself refuses a case variant.
        with pytest.raises(IntegrityError), engine.begin() as conn:
            conn.execute(
                insert(User),
                {"username": "BOB", "password_hash": "x", "role": "learner", "language": "zh"}
                | {"created_at": datetime(2026, 1, 2, tzinfo=UTC)},
            )
        command.downgrade(config_for(url), "0002")  # and back, names as they now are
    finally:
        engine.dispose()


def config_for(url: str) -> Any:
    config = alembic_config()
    config.set_main_option("sqlalchemy.url", url)
    return config


# ---------------------------------------------------------------- named states


def engine_for(dialect: str, request: pytest.FixtureRequest, tmp_path: Path) -> Engine:
    url = sqlite_url(tmp_path) if dialect == "sqlite" else request.getfixturevalue("postgres_url")
    return make_engine(url)


def upgrade_to(engine: Engine, revision: str) -> None:
    config = alembic_config()
    with engine.begin() as conn:
        config.attributes["connection"] = conn
        command.upgrade(config, revision)


def named_checks() -> dict[str, set[str]]:
    """Each CHECK the models declare on a named state (`web.db.one_of`): its name and values."""
    found = {}
    for table in Base.metadata.sorted_tables:
        for constraint in table.constraints:
            if isinstance(constraint, CheckConstraint):
                found[str(constraint.name)] = set(re.findall(r"'([^']*)'", str(constraint.sqltext)))
    return found


def reflected_checks(engine: Engine) -> dict[str, set[str]]:
    inspector = inspect(engine)
    return {
        str(check["name"]): set(re.findall(r"'([^']*)'", check["sqltext"]))
        for table in inspector.get_table_names()
        for check in inspector.get_check_constraints(table)
    }


@dataclass
class OldRows:
    """What an old database holds that refers to a submission: its events and a score."""

    submission_id: int
    events: int


def add_old_rows(engine: Engine) -> OldRows:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    with engine.begin() as conn:
        user_id = conn.execute(
            insert(User).returning(User.id),
            {"username": "old", "password_hash": "x", "role": "learner", "language": "zh", "created_at": now},
        ).scalar_one()
        sub_id = conn.execute(
            insert(Submission).returning(Submission.id),
            {"user_id": user_id, "problem_id": "204", "mode": "submit", "code": "x = 1", "status": "done"}
            | {"client_address": "", "created_at": now, "attempts": 1, "score": 7, "max_score": 10},
        ).scalar_one()
        kinds = ["queued", "claimed", "done", "rejudge", "claimed", "requeued", "claimed", "failed"]
        conn.execute(
            insert(SubmissionEvent),
            [{"submission_id": sub_id, "kind": k, "detail": "", "at": now} for k in kinds],
        )
        conn.execute(
            insert(Score),
            {"user_id": user_id, "problem_id": "204", "best_score": 7, "max_score": 10, "solved": False}
            | {"improved_at": now, "best_submission_id": sub_id},
        )
    return OldRows(sub_id, len(kinds))


def assert_old_rows_kept(engine: Engine, old: OldRows) -> None:
    with engine.connect() as conn:
        events = conn.scalar(select(func.count()).where(SubmissionEvent.submission_id == old.submission_id))
        best = conn.scalar(select(Score.best_submission_id))
    assert (events, best) == (old.events, old.submission_id)


@pytest.mark.parametrize("dialect", ["sqlite", "postgresql"])
def test_the_database_refuses_a_state_that_has_no_name(
    dialect: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    engine = engine_for(dialect, request, tmp_path)
    try:
        upgrade(engine)
        # The migration made the CHECKs the models declare, with the enums' values.
        declared = named_checks()
        assert declared == {
            "ck_submissions_status": {str(s) for s in SubmissionStatus},
            "ck_submissions_mode": {str(m) for m in Mode},
            "ck_submission_events_kind": {str(k) for k in EventKind},
            "ck_problem_validations_status": {str(v) for v in ValidationState},
            "ck_rate_events_kind": {str(k) for k in RateKind},
            "ck_api_tokens_scope": {str(s) for s in TokenScope},
        }
        assert reflected_checks(engine) == declared
        old = add_old_rows(engine)
        for table, values in [
            (Submission.__table__, {"status": "judged"}),
            (Submission.__table__, {"mode": "test"}),
            (SubmissionEvent.__table__, {"kind": "claimd"}),
        ]:
            with pytest.raises(IntegrityError), engine.begin() as conn:
                conn.execute(update(table).values(**values))
        with pytest.raises(IntegrityError), engine.begin() as conn:
            conn.execute(insert(RateEvent), {"kind": "login", "address": "a", "at": utcnow()})
        with engine.begin() as conn:  # a named one is fine
            conn.execute(insert(RateEvent), {"kind": RateKind.PASSWORD, "address": "a", "at": utcnow()})
        assert_old_rows_kept(engine, old)
    finally:
        engine.dispose()


@pytest.mark.parametrize("dialect", ["sqlite", "postgresql"])
def test_adding_and_dropping_the_checks_keeps_every_row(
    dialect: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """On SQLite the CHECKs are added by copying each table and dropping the old one: with foreign
    keys enforced, dropping `submissions` would delete its events and unlink its score."""
    engine = engine_for(dialect, request, tmp_path)
    try:
        upgrade_to(engine, "0003")
        old = add_old_rows(engine)
        upgrade(engine)  # the server's way
        assert is_current(engine)
        assert_old_rows_kept(engine, old)
        url = engine.url.render_as_string(hide_password=False)
        command.downgrade(config_for(url), "0003")  # the alembic command's way, and back
        assert_old_rows_kept(engine, old)
        assert reflected_checks(engine) == {}
        command.upgrade(config_for(url), "head")
        assert_old_rows_kept(engine, old)
        assert set(reflected_checks(engine)) == set(named_checks())
    finally:
        engine.dispose()


def test_a_transaction_that_enforces_foreign_keys_is_refused_not_emptied(tmp_path: Path) -> None:
    """SQLite ignores PRAGMA foreign_keys inside a transaction: the migration then refuses to run
    rather than copy tables while the drop of the old one would cascade."""
    engine = make_engine(sqlite_url(tmp_path))
    try:
        upgrade_to(engine, "0003")
        old = add_old_rows(engine)
        config = alembic_config()
        with pytest.raises(RuntimeError, match="foreign keys"), engine.begin() as conn:
            conn.execute(update(User).values(language="en"))  # the transaction has begun
            config.attributes["connection"] = conn
            command.upgrade(config, "head")
        assert_old_rows_kept(engine, old)
        assert not is_current(engine)
        upgrade(engine)
        assert_old_rows_kept(engine, old)
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
    # Fixed ids: the random one must not name the test (pytest-xdist needs equal collections).
    ids=["secret", "changeme", "dev", "random-but-short", "repeated-char", "repeated-pair"],
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
        assert platform.pool is None and platform.warnings == ()
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


# ---------------------------------------------------------------- the public URL


@pytest.mark.parametrize(
    ("host", "url"),
    [
        ("127.0.0.1", "http://127.0.0.1:8123"),
        ("0.0.0.0", "http://127.0.0.1:8123"),
        ("::", "http://127.0.0.1:8123"),
        ("::1", "http://[::1]:8123"),
        ("localhost", "http://localhost:8123"),
        ("192.0.2.7", "http://192.0.2.7:8123"),
    ],
)
def test_the_public_url_defaults_to_the_listen_address(host: str, url: str, tmp_path: Path) -> None:
    assert listen_url(host, 8123) == url
    platform = build_platform(server_settings(tmp_path, workers=0), host, 8123)
    try:
        assert platform.public_url == url
    finally:
        platform.engine.dispose()
    warning = public_url_warning(server_settings(tmp_path, workers=0), host, 8123)
    if is_loopback(host):
        assert warning is None
    else:
        assert warning is not None and "JUDGE_PUBLIC_URL" in warning and url in warning


def test_a_configured_public_url_wins(tmp_path: Path) -> None:
    settings = server_settings(tmp_path, workers=0, public_url="https://judge.example.edu/course/")
    platform = build_platform(settings, "0.0.0.0", 8123)
    try:
        assert platform.public_url == "https://judge.example.edu/course"
    finally:
        platform.engine.dispose()
    assert public_url_warning(settings, "0.0.0.0", 8123) is None
    for bad in ("judge.example.edu", "ftp://judge.example.edu", "https://"):
        with pytest.raises(ValueError, match="JUDGE_PUBLIC_URL"):
            server_settings(tmp_path, public_url=bad)
