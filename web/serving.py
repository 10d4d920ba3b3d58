"""`judge serve`: the web app in one process (SQLite or PostgreSQL), or in N processes behind one
port (`--processes N`, PostgreSQL only).

With N processes, uvicorn's supervisor binds the port, starts N children that accept on it and
starts a new one when a child dies. This process prepares the database once (migrations, the
problems' versions) before any child starts; each child then builds its own platform from the
same settings (`child_app`), with its own connections, its own judging threads
(JUDGE_WORKERS, 0 to leave judging to `judge worker`), and its own listening connection for
the notices that tie the processes together (web.notify). Prometheus counts in files shared by
every process of this host (multiprocess mode), so /metrics is whole whichever child answers.

Slow clients are cut off (`SlowClientDeadlines`): uvicorn times out only a kept-alive connection
that sends nothing at all after an answer, so a client that sends its request a byte a second
(slowloris), or never sends one, held its connection, the request's task and its memory for as
long as it liked. Here a request's head must arrive within JUDGE_HEADER_TIMEOUT_S of the
connection opening (or of the previous answer), and its body within JUDGE_BODY_TIMEOUT_S of its
head; else the connection is closed. The answer itself is never timed: a long-poll waits as
long as it was asked to.
"""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import os
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, cast

from uvicorn.protocols.http.h11_impl import H11Protocol

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

    SlowClientDeadlines.configure(settings)
    platform = build_platform(settings, host, port)  # its JudgeErrors are said by judge.cli.main
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
    prepare_database(settings)
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
    SlowClientDeadlines.configure(settings)  # before uvicorn takes this child's first connection
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


def _announce(platform: Platform, settings: WebSettings, host: str, port: int, processes: int) -> None:
    from web.platform import public_url_warning

    # The server's log is in English, as its other lines are.
    for warning in [*(w.en for w in platform.warnings), public_url_warning(settings, host, port)]:
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
        # Slow clients: the head and the body within their deadlines, an idle kept-alive
        # connection for keep_alive_s (see the module's docstring).
        http=HTTP_PROTOCOL,
        timeout_keep_alive=settings.keep_alive_s,
    )


class SlowClientDeadlines:
    """Deadlines for what a client sends, mixed into uvicorn's HTTP protocol (one object per
    connection): the request's head within `header_timeout_s` of the connection opening or of
    the previous answer, its body within `body_timeout_s` of its head. A client that misses one
    has its connection closed; what the server is working on for it sees a disconnect.

    It relies only on what both of uvicorn's HTTP/1.1 protocols (httptools, h11) have: a new
    `cycle` per request, made when the request's head is complete, whose `more_body` turns
    False when its body is, and `on_response_complete` after each answer.
    """

    header_timeout_s: ClassVar[float] = 10.0
    body_timeout_s: ClassVar[float] = 60.0

    # Given by the uvicorn protocol this is mixed into.
    loop: asyncio.AbstractEventLoop
    transport: asyncio.Transport
    cycle: Any

    _head_timer: asyncio.TimerHandle | None = None
    _body_timer: asyncio.TimerHandle | None = None
    _seen_cycle: object = None

    @staticmethod
    def configure(settings: WebSettings) -> None:
        """The deadlines of every connection this process serves from now on."""
        SlowClientDeadlines.header_timeout_s = settings.header_timeout_s
        SlowClientDeadlines.body_timeout_s = settings.body_timeout_s

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        cast(Any, super()).connection_made(transport)
        self._arm_head()

    def data_received(self, data: bytes) -> None:
        cast(Any, super()).data_received(data)
        self._follow()

    def on_response_complete(self) -> None:
        cast(Any, super()).on_response_complete()
        if self.transport.is_closing():
            return
        self._follow()  # h11 may have begun a request that was waiting behind this one
        if self.cycle is None or self.cycle.response_complete:
            # Nothing more to answer: the next request's head is on the clock (the rest of a
            # body that the answer did not read too).
            self._cancel_body()
            self._arm_head()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_head()
        self._cancel_body()
        cast(Any, super()).connection_lost(exc)

    def _follow(self) -> None:
        """Start and stop the clocks as the request that the protocol parses moves on."""
        cycle = self.cycle
        if cycle is None:
            return
        if cycle is not self._seen_cycle:  # a new request's head is complete
            self._seen_cycle = cycle
            self._cancel_head()
            if cycle.more_body:
                self._body_timer = self.loop.call_later(self.body_timeout_s, self._too_slow, "body")
        if self._body_timer is not None and (not cycle.more_body or cycle.response_complete):
            self._cancel_body()

    def _arm_head(self) -> None:
        self._cancel_head()
        self._head_timer = self.loop.call_later(self.header_timeout_s, self._too_slow, "head")

    def _cancel_head(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _cancel_body(self) -> None:
        if self._body_timer is not None:
            self._body_timer.cancel()
            self._body_timer = None

    def _too_slow(self, part: str) -> None:
        self._head_timer = self._body_timer = None
        if not self.transport.is_closing():
            limit = self.header_timeout_s if part == "head" else self.body_timeout_s
            peer = self.transport.get_extra_info("peername")
            log.debug(
                "closed a connection from %s: its request's %s took longer than %s s", peer, part, limit
            )
            self.transport.close()


class DeadlineH11Protocol(SlowClientDeadlines, H11Protocol):
    """uvicorn's h11 protocol with the slow-client deadlines."""


# The protocol uvicorn's "auto" would pick (httptools when installed, else h11), with the
# slow-client deadlines; at module level, so that `--processes N` hands it to its children by name.
HTTP_PROTOCOL: type[asyncio.Protocol] = DeadlineH11Protocol
try:
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    class DeadlineHttpToolsProtocol(SlowClientDeadlines, HttpToolsProtocol):
        """uvicorn's httptools protocol with the slow-client deadlines."""

    HTTP_PROTOCOL = DeadlineHttpToolsProtocol
except ImportError:  # httptools is not installed
    pass
