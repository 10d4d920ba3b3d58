"""The running platform: settings, database, loaded problems, the judge, workers, metrics.

Built once per process by `create_app` (for `judge serve`) or by `judge worker`.
"""

from __future__ import annotations

import ipaddress
import logging
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from judge.authoring.package import Problem
from judge.backends import make_backend, require_sandbox
from judge.core.messages import msg
from judge.core.texts import Text
from judge.expected import ExpectedStore
from web.db import make_engine, make_sessionmaker
from web.language import Catalogs
from web.metrics import Metrics
from web.migrate import is_current, upgrade
from web.notify import ANYTHING, LocalNotices, Notices, Topic, make_notices
from web.problems.sync import load_packages, replace_problems, sync_problems
from web.problems.validation import mark_interrupted
from web.settings import WebSettings, resolve_secret_key
from web.statements import Statements
from web.submissions.queue import queue_depth
from web.submissions.waiting import CompletionBoard
from web.submissions.worker import JudgeContext, QueueSettings, WorkerPool


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def listen_url(host: str, port: int) -> str:
    """This server's own URL from its listen address: every-address listens (0.0.0.0, ::) are
    written as loopback, which at least works on this machine."""
    if host in ("0.0.0.0", "::", ""):
        host = "127.0.0.1"
    elif ":" in host:
        host = f"[{host}]"  # an IPv6 address
    return f"http://{host}:{port}"


def public_url_warning(settings: WebSettings, host: str, port: int) -> str | None:
    """What `judge serve` says when learners elsewhere would get a kit that points at the wrong place."""
    if settings.public_url is not None or is_loopback(host):
        return None
    return (
        f"JUDGE_PUBLIC_URL is not set: the practice kit will send learners' code to "
        f"{listen_url(host, port)}; set it to the address they reach this server at"
    )


class KitCache:
    """The practice kit's zip, built once per problem set (its ids and content hashes, the judge
    code it copies: judge.authoring.kit.kit_fingerprint) and kept: in memory, and on disk when given a
    folder, so that a restarted server does not build it again. A build can run in the
    background (`start`) while pages show how far it got (`status`)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._kept: tuple[str, bytes] | None = None
        self._starting = threading.Lock()  # never held across a build: `status` answers at once
        self._thread: threading.Thread | None = None
        self.builds = 0
        self.steps = (0, 0)  # problems done, problems in all, of the build under way
        self.failure: str | None = None  # why the last background build failed

    def ready(self, key: str) -> bool:
        kept = self._kept
        return kept is not None and kept[0] == key

    def get(
        self, key: str, build: Callable[[Callable[[int, int], None]], bytes], disk: Path | None = None
    ) -> bytes:
        kept = self._kept
        if kept is not None and kept[0] == key:
            return kept[1]  # no lock: a download never waits for anything but a build
        with self._lock:  # one build at a time; who waited for it gets its bytes
            kept = self._kept
            if kept is None or kept[0] != key:
                kept = (key, self._read(disk, key) or self._build(key, build, disk))
                self._kept = kept  # only the newest problem set is worth keeping
            return kept[1]

    def start(
        self, key: str, build: Callable[[Callable[[int, int], None]], bytes], disk: Path | None = None
    ) -> None:
        """Build in a thread of its own unless built or building: the page polls `status`."""
        with self._starting:
            if self.ready(key) or (self._thread is not None and self._thread.is_alive()):
                return
            self.failure = None

            def run() -> None:
                try:
                    self.get(key, build, disk)
                except Exception as exc:  # the page says it failed; the next download tries again
                    logging.getLogger(__name__).exception("the practice kit's build failed")
                    self.failure = type(exc).__name__

            self._thread = threading.Thread(target=run, name="kit-build", daemon=True)
            self._thread.start()

    def _build(
        self, key: str, build: Callable[[Callable[[int, int], None]], bytes], disk: Path | None
    ) -> bytes:
        self.steps = (0, 0)

        def step(done: int, total: int) -> None:
            self.steps = (done, total)

        data = build(step)
        self.builds += 1
        if disk is not None:
            disk.mkdir(parents=True, exist_ok=True)
            for old in disk.glob("kit-*.zip"):
                old.unlink(missing_ok=True)
            part = disk / f".kit-{key}.{os.getpid()}.part"
            part.write_bytes(data)
            os.replace(part, disk / f"kit-{key}.zip")  # whole or absent, for another process too
        return data

    @staticmethod
    def _read(disk: Path | None, key: str) -> bytes | None:
        if disk is None:
            return None
        try:
            return (disk / f"kit-{key}.zip").read_bytes()
        except OSError:
            return None


@dataclass
class Platform:
    settings: WebSettings
    engine: Engine
    factory: sessionmaker[Session]
    secret_key: str
    problems: dict[str, Problem]
    metrics: Metrics
    pool: WorkerPool | None = None
    judge: JudgeContext | None = None  # None when this process judges nothing (workers = 0)
    backend_name: str = "none"
    warnings: list[Text] = field(default_factory=list)
    # Where learners reach this server (JUDGE_PUBLIC_URL, else the listen address): the kit's.
    public_url: str = "http://127.0.0.1:8000"
    # What the platform keeps, so that two platforms in one process (tests) never share it.
    kit: KitCache = field(default_factory=KitCache)
    statements: Statements = field(default_factory=Statements)
    catalogs: Catalogs = field(default_factory=Catalogs)
    # What changed, said between the parts of this process and, on PostgreSQL, to every other
    # process and host (web.notify); `listen` connects the board, the workers and the problems.
    notices: Notices = field(default_factory=LocalNotices)
    # Where long-polling readers wait for the SUBMISSION notices of their submissions.
    board: CompletionBoard = field(default_factory=CompletionBoard)

    def listen(self) -> None:
        """Subscribe this process's parts to the notices (the worker pool subscribes itself)."""
        self.board = CompletionBoard(notified=lambda: self.notices.shared)
        self.notices.subscribe(Topic.SUBMISSION, self._submission_changed)
        self.notices.subscribe(Topic.PROBLEMS, lambda _payload: self.load_problems())

    def _submission_changed(self, payload: str) -> None:
        if payload == ANYTHING:
            self.board.notify_all()
        elif payload.isdigit():
            self.board.notify(int(payload))

    def load_problems(self) -> None:
        """Read problems/ again (another process synced it into the database)."""
        replace_problems(self.problems, load_packages(self.settings.problems_dir))
        self.statements.forget()  # kept per text, so never stale; this frees the old versions' HTML

    def reload_problems(self) -> list[str]:
        """Reload problems/ and record its versions (`judge problems sync` does the same from the
        command line); every other process reloads too."""
        self.load_problems()
        return sync_problems(self.factory, self.problems, self.notices)


def judge_context(
    settings: WebSettings, problems: dict[str, Problem], serving_others: bool
) -> tuple[JudgeContext, list[Text]]:
    """The judge for workers. Code of other people needs a real sandbox unless allowed."""
    backend, warnings = make_backend(settings.backend, settings.sandbox)
    require_sandbox(backend, settings.allow_unsandboxed or not serving_others)
    if not backend.is_sandbox:
        warnings.append(msg("judging_unsandboxed"))
    context = JudgeContext(
        problems, backend, ExpectedStore(settings.cache_dir, settings.startup_s), settings.startup_s
    )
    return context, warnings


def prepare_database(settings: WebSettings) -> None:
    """What a server does once before any of its processes serves: migrate, record the problems'
    versions, end the validation runs that died with the last server."""
    resolve_secret_key(settings)  # the first run keeps a new one now, not N children at once
    engine = make_engine(settings.sqlalchemy_url())
    try:
        upgrade(engine)
        factory = make_sessionmaker(engine)
        sync_problems(factory, load_packages(settings.problems_dir), make_notices(engine))
        mark_interrupted(factory)
    finally:
        engine.dispose()


def build_platform(
    settings: WebSettings, host: str = "127.0.0.1", port: int = 8000, prepared: bool = False
) -> Platform:
    """Migrate, load problems and prepare workers (not started). Raises on unsafe settings.
    `host` and `port` are where the server listens; `prepared`: `prepare_database` has run (one
    process of several), so only check that the schema is current."""
    secret_key = resolve_secret_key(settings)
    engine = make_engine(settings.sqlalchemy_url())
    try:
        factory = make_sessionmaker(engine)
        problems = load_packages(settings.problems_dir)
        if prepared:
            if not is_current(engine):
                raise RuntimeError("the database schema is not at the newest migration")
        else:
            upgrade(engine)
            sync_problems(factory, problems)
            mark_interrupted(factory)

        def depth() -> dict[str, int]:
            with factory() as session:
                return queue_depth(session)

        platform = Platform(settings, engine, factory, secret_key, problems, Metrics(depth))
        platform.notices = make_notices(engine)
        platform.notices.attach(factory)
        platform.listen()
        platform.public_url = settings.public_url or listen_url(host, port)
        if settings.workers > 0:
            serving_others = settings.production or not is_loopback(host)
            context, warnings = judge_context(settings, problems, serving_others)
            platform.judge = context
            platform.backend_name = context.backend.name
            platform.warnings.extend(warnings)
            queues = QueueSettings.of(settings)
            platform.pool = WorkerPool(
                settings.workers, factory, context, queues, platform.metrics, platform.notices
            )
    except BaseException:
        engine.dispose()  # refused (unsafe settings) or failed: leave no connections behind
        raise
    return platform
