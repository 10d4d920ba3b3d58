"""`judge serve`: the web app in one process (SQLite or PostgreSQL), or in N processes behind one
port (`--processes N`, PostgreSQL only).

With N processes, uvicorn's supervisor binds the port, starts N children that accept on it and
starts a new one when a child dies. This process prepares the database once (migrations, the
problems' versions) before any child starts; each child then builds its own platform from the
same settings (`child_app`), with its own connections, its own judging threads
(JUDGE_WORKERS, 0 to leave judging to `judge worker`), and its own listening connection for
the notices that tie the processes together (web.notify). Prometheus counts in files shared by
every process of this host (multiprocess mode), so /metrics is whole whichever child answers.
"""

from __future__ import annotations

import gc
import json
import logging
import os
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from judge.cli import UsageError
from judge.logs import logging_config
from web.settings import WebSettings

if TYPE_CHECKING:
    from fastapi import FastAPI

    from web.platform import Platform

log = logging.getLogger(__name__)

# What a child needs from the command line, handed down in its environment (uvicorn starts
# children by import string, so they are given nothing else).
CHILD_ENV = "JUDGE_SERVE_CHILD"
# prometheus_client's own switch, read when it is imported: set before any child starts.
METRICS_DIR_ENV = "PROMETHEUS_MULTIPROC_DIR"


def serve(
    settings: WebSettings, host: str, port: int, processes: int, log_level: str, access_log: bool
) -> int:
    if processes > 1:
        return _serve_many(settings, host, port, processes, log_level, access_log)
    count_in(settings.metrics_dir)  # beside `judge worker`s of this host, if set
    from web.platform import build_platform

    platform = _built(lambda: build_platform(settings, host, port))
    _announce(platform, settings, host, port, processes=1)
    _run_uvicorn(_app_of(platform, settings, host), settings, host, port, log_level, access_log)
    return 0


def _serve_many(
    settings: WebSettings, host: str, port: int, processes: int, log_level: str, access_log: bool
) -> int:
    from web.platform import prepare_database

    if not settings.sqlalchemy_url().startswith("postgresql"):
        raise UsageError(
            f"--processes {processes} needs PostgreSQL (JUDGE_DATABASE_URL=postgresql+psycopg://...): "
            "an SQLite database is one process's; leave out --processes to serve it"
        )
    _built(lambda: prepare_database(settings))
    metrics_dir, made = _metrics_dir(settings)
    count_in(metrics_dir)
    os.environ[CHILD_ENV] = json.dumps({"host": host, "port": port})
    log.info(
        "judge serve: %s processes on http://%s:%s (database %s, %s judging threads in each; "
        "metrics of this host in %s)",
        processes,
        host,
        port,
        shown_database(settings),
        settings.workers,
        metrics_dir,
    )
    try:
        _run_uvicorn("web.serving:child_app", settings, host, port, log_level, access_log, processes)
    finally:
        if made:
            shutil.rmtree(metrics_dir, ignore_errors=True)
    return 0


def child_app() -> FastAPI:
    """One child of `judge serve --processes N` (uvicorn's factory): its settings come from the
    same sources as the parent's (the environment, JUDGE_CONFIG), the database is prepared."""
    from web.platform import build_platform

    listen = json.loads(os.environ[CHILD_ENV])
    host, port = str(listen["host"]), int(listen["port"])
    settings = WebSettings()
    platform = build_platform(settings, host, port, prepared=True)
    _announce(platform, settings, host, port, processes=0)
    return _app_of(platform, settings, host)


def count_in(metrics_dir: Path | None) -> None:
    """Count this process's metrics in `metrics_dir`'s files (made if missing), with every other
    process of the host that does; before prometheus_client is imported (it reads the switch
    then). None: count in memory."""
    if metrics_dir is not None:
        metrics_dir.mkdir(parents=True, exist_ok=True)
        os.environ[METRICS_DIR_ENV] = str(metrics_dir)


def _metrics_dir(settings: WebSettings) -> tuple[Path, bool]:
    """Where this host's processes count (JUDGE_METRICS_DIR, shared with `judge worker`s of the
    host), else a fresh folder of this server's; True when it is ours to remove at the end."""
    if settings.metrics_dir is not None:
        return settings.metrics_dir, False
    return Path(tempfile.mkdtemp(prefix="llm-judge-metrics-")), True


def shown_database(settings: WebSettings) -> str:
    """The database URL as logs show it: without its password."""
    from sqlalchemy import make_url

    try:
        return make_url(settings.database_url).render_as_string(hide_password=True)
    except Exception:  # not a URL SQLAlchemy reads: the engine will say so; show no part of it
        return "(unreadable URL)"


def platform_errors() -> tuple[type[Exception], ...]:
    """What building a platform raises for settings that cannot serve: said as a usage error."""
    from judge.backends import BackendUnavailable
    from web.settings import InsecureSettings

    return (BackendUnavailable, InsecureSettings)


def _built(build: Any) -> Any:
    try:
        return build()
    except platform_errors() as exc:
        raise UsageError(str(exc)) from exc


def _announce(platform: Platform, settings: WebSettings, host: str, port: int, processes: int) -> None:
    from web.platform import public_url_warning

    for warning in [*platform.warnings, public_url_warning(settings, host, port)]:
        if warning:
            log.warning("%s", warning)
    proxies = settings.trusted_proxy_list()
    log.info(
        "judge serve%s: http://%s:%s, public URL %s (database %s, %s workers on the %s backend, "
        "%s problems; forwarded addresses from %s)",
        "" if processes else f" (process {os.getpid()})",
        host,
        port,
        platform.public_url,
        shown_database(settings),
        settings.workers,
        platform.backend_name,
        len(platform.problems),
        ", ".join(proxies) or "no proxy",
    )


def _app_of(platform: Platform, settings: WebSettings, host: str) -> FastAPI:
    from web.app import create_app

    app = create_app(settings, host, platform)
    # Everything loaded so far (torch among it: a few hundred thousand objects) lives as long as
    # the process. Frozen, the collector no longer walks it: each full collection took ~0.1 s,
    # a stall for every request in flight.
    gc.collect()
    gc.freeze()
    return app


def _run_uvicorn(
    app: Any,
    settings: WebSettings,
    host: str,
    port: int,
    log_level: str,
    access_log: bool,
    processes: int = 1,
) -> None:
    import uvicorn

    proxies = settings.trusted_proxy_list()
    # One line per request written at once costs a fifth of the throughput; errors and start-up
    # are logged either way, and /metrics counts the judgements.
    # X-Forwarded-For is believed only from the configured proxies: uvicorn's default trusts it from
    # loopback, which let any local client (or a proxy that passes the header on) pick its address.
    # uvicorn applies its log config when it starts: hand it ours, so its lines look like ours.
    uvicorn.run(
        app,
        host=host,
        port=port,
        factory=processes > 1,
        workers=processes if processes > 1 else None,
        log_config=logging_config(log_level),
        log_level=log_level,
        access_log=access_log,
        proxy_headers=bool(proxies),
        forwarded_allow_ips=proxies,
    )
