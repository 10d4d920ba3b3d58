"""The running platform: settings, database, loaded problems, the judge, workers, metrics.

Built once per process by `create_app` (for `judge serve`) or by `judge worker`.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field

from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from judge.backends import make_backend, require_sandbox
from judge.expected import ExpectedStore
from judge.package import Problem
from web.db import make_engine, make_sessionmaker
from web.metrics import Metrics
from web.migrate import upgrade
from web.pages.markdown import forget_statements
from web.problems.sync import load_packages, sync_problems
from web.problems.validation import mark_interrupted
from web.settings import WebSettings, resolve_secret_key
from web.submissions.queue import queue_depth
from web.submissions.worker import JudgeContext, QueueSettings, WorkerPool


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


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
    warnings: list[str] = field(default_factory=list)

    def reload_problems(self) -> list[str]:
        """Reload problems/ (`judge problems sync` does the same from the command line)."""
        self.problems.clear()
        self.problems.update(load_packages(self.settings.problems_dir))
        changed = sync_problems(self.factory, self.problems)
        forget_statements()  # kept per text, so never stale; this frees the old versions' HTML
        return changed

    def wake_workers(self) -> None:
        if self.pool is not None:
            self.pool.wake()


def judge_context(
    settings: WebSettings, problems: dict[str, Problem], serving_others: bool
) -> tuple[JudgeContext, list[str]]:
    """The judge for workers. Code of other people needs a real sandbox unless allowed."""
    backend, warnings = make_backend(settings.backend)
    require_sandbox(backend, settings.allow_unsandboxed or not serving_others)
    if not backend.is_sandbox:
        warnings.append(
            "评测没有沙箱 judging without a sandbox: only for a server that you alone use on this machine"
        )
    context = JudgeContext(
        problems, backend, ExpectedStore(settings.cache_dir, settings.startup_s), settings.startup_s
    )
    return context, warnings


def build_platform(settings: WebSettings, host: str = "127.0.0.1") -> Platform:
    """Migrate, load problems and prepare workers (not started). Raises on unsafe settings."""
    secret_key = resolve_secret_key(settings)
    engine = make_engine(settings.sqlalchemy_url())
    try:
        upgrade(engine)
        factory = make_sessionmaker(engine)
        problems = load_packages(settings.problems_dir)
        sync_problems(factory, problems)
        mark_interrupted(factory)

        def depth() -> dict[str, int]:
            with factory() as session:
                return queue_depth(session)

        platform = Platform(settings, engine, factory, secret_key, problems, Metrics(depth))
        if settings.workers > 0:
            serving_others = settings.production or not is_loopback(host)
            context, warnings = judge_context(settings, problems, serving_others)
            platform.judge = context
            platform.backend_name = context.backend.name
            platform.warnings.extend(warnings)
            queues = QueueSettings.of(settings)
            platform.pool = WorkerPool(settings.workers, factory, context, queues, platform.metrics)
    except BaseException:
        engine.dispose()  # refused (unsafe settings) or failed: leave no connections behind
        raise
    return platform
