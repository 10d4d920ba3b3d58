"""The running platform: settings, database, loaded problems, the judge, workers, metrics.

Built whole, once per process, by `build_platform` (for `judge serve`); `judge worker` builds
only the judging pieces (web.cli).
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from judge.authoring.package import Problem
from judge.core.texts import Text
from web.db import make_engine, make_sessionmaker
from web.judging.judges import JudgeContext, judge_context
from web.judging.notices import waiting_board
from web.judging.queue import queue_depth
from web.judging.waiting import CompletionBoard
from web.judging.worker import QueueSettings, WorkerPool
from web.language import Catalogs
from web.metrics import Metrics
from web.migrate import is_current, upgrade
from web.notify import Notices, Topic, make_notices
from web.problems.kitstore import KIT_FOLDER, PracticeKit
from web.problems.sync import load_packages, replace_problems, sync_problems
from web.problems.validation import mark_interrupted
from web.settings import WebSettings, resolve_secret_key
from web.statements import Statements


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


@dataclass(frozen=True, eq=False)  # by identity: it holds caches and a dict
class Platform:
    """Everything a process of the site runs on, built whole by `build_platform` and never
    changed after (a reload replaces the problems in their dict; the caches fill). Routes take
    the pieces they use through web.deps, and services take only those pieces."""

    settings: WebSettings
    engine: Engine
    factory: sessionmaker[Session]
    secret_key: str
    problems: dict[str, Problem]
    metrics: Metrics
    # What changed, said between the parts of this process and, on PostgreSQL, to every other
    # process and host (web.notify).
    notices: Notices
    # Where long-polling readers wait for the SUBMISSION notices of their submissions.
    board: CompletionBoard
    judge: JudgeContext | None  # None when this process judges nothing (workers = 0)
    pool: WorkerPool | None
    warnings: tuple[Text, ...]  # what the operator should know of the judge (no sandbox, ...)
    # Where learners reach this server (JUDGE_PUBLIC_URL, else the listen address): the kit's.
    public_url: str
    # What the platform keeps, so that two platforms in one process (tests) never share it.
    kit: PracticeKit
    statements: Statements
    catalogs: Catalogs

    @property
    def backend_name(self) -> str:
        return self.judge.backend.name if self.judge is not None else "none"

    def load_problems(self) -> None:
        """Read problems/ again (another process synced it into the database)."""
        replace_problems(self.problems, load_packages(self.settings.problems_dir))
        self.statements.forget()  # kept per text, so never stale; this frees the old versions' HTML

    def reload_problems(self) -> list[str]:
        """Reload problems/ and record its versions (`judge problems sync` does the same from the
        command line); every other process reloads too."""
        self.load_problems()
        changed = sync_problems(self.factory, self.problems, self.notices)
        # A page read between the load and the sync's commit kept the rows it found then.
        self.statements.forget()
        return changed


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

        metrics = Metrics(depth)
        notices = make_notices(engine)
        notices.attach(factory)
        judge: JudgeContext | None = None
        pool: WorkerPool | None = None
        warnings: list[Text] = []
        if settings.workers > 0:
            serving_others = settings.production or not is_loopback(host)
            judge, warnings = judge_context(settings, problems, serving_others)
            queues = QueueSettings.of(settings)
            pool = WorkerPool(settings.workers, factory, judge, queues, metrics, notices)
        public_url = settings.public_url or listen_url(host, port)
        platform = Platform(
            settings=settings,
            engine=engine,
            factory=factory,
            secret_key=secret_key,
            problems=problems,
            metrics=metrics,
            notices=notices,
            board=waiting_board(notices),
            judge=judge,
            pool=pool,
            warnings=tuple(warnings),
            public_url=public_url,
            kit=PracticeKit(problems, judge, public_url, settings.cache_dir / KIT_FOLDER),
            statements=Statements(),
            catalogs=Catalogs(),
        )
        # Another process synced problems/ (an admin's reload, `judge problems sync`).
        notices.subscribe(Topic.PROBLEMS, lambda _payload: platform.load_problems())
    except BaseException:
        engine.dispose()  # refused (unsafe settings) or failed: leave no connections behind
        raise
    return platform
