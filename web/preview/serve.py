"""`judge preview DIR`: a throwaway site (SQLite in a temporary folder, its own secret key) on
loopback, with the author signed in by the printed link, judging on their own machine."""

from __future__ import annotations

import logging
import shutil
import signal
import socket
import sys
import tempfile
from pathlib import Path

from fastapi import FastAPI

from judge.cli import UsageError
from judge.core.texts import Text
from judge.logs import logging_config
from web.app import create_app
from web.platform import Platform, build_platform, is_loopback
from web.preview.packages import package_dirs, problems_folder
from web.preview.routes import router
from web.preview.state import LOGIN_PATH, PreviewState
from web.preview.watcher import Watcher, refresh
from web.settings import WebSettings

log = logging.getLogger(__name__)


def free_port(host: str) -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def preview_settings(settings: WebSettings, problems_dir: Path, data_dir: Path, backend: str) -> WebSettings:
    """The author's settings (their cache: expected outputs, validation records) with a database
    and key of the preview's own, one in-process judging thread, and nothing of production."""
    return settings.model_copy(
        update={
            "problems_dir": problems_dir,
            "data_dir": data_dir,
            "database_url": f"sqlite:///{data_dir / 'preview.db'}",
            "secret_key": None,  # a new random one, kept in data_dir
            "production": False,
            "public_url": None,
            "workers": max(1, min(settings.workers, 2)),
            "backend": backend,
            "secure_cookies": False,
        }
    )


def preview_app(
    target: Path, settings: WebSettings, host: str, port: int, backend: str
) -> tuple[FastAPI, Watcher]:
    """The site of a preview and its watcher (not started); the caller removes data_dir after."""
    dirs = package_dirs(target)
    data_dir = Path(tempfile.mkdtemp(prefix="judge-preview-"))
    site = preview_settings(settings, problems_folder(target, dirs, data_dir), data_dir, backend)
    platform: Platform = build_platform(site, host, port)
    state = PreviewState(target, site.cache_dir)
    refresh(platform, state, dirs)  # the packages with their errors, and the first version
    app = create_app(site, host, platform)
    app.state.preview = state  # the base template shows the banner when this is set
    app.include_router(router)
    return app, Watcher(platform, state, dirs)


def announce(url: str, lang: str) -> str:
    text = Text(
        zh=f"judge preview：在浏览器中打开下面的地址（仅本机可访问，只能打开一次；Ctrl-C 结束）\n  {url}",
        en=f"judge preview: open this address in your browser (this machine only, once; Ctrl-C ends)\n"
        f"  {url}",
    )
    return text.zh if lang == "zh" else text.en


def run_preview(
    settings: WebSettings, target: Path, host: str, port: int | None, backend: str, lang: str, log_level: str
) -> int:
    if not is_loopback(host):
        raise UsageError(f"judge preview serves this machine only: --host {host} is not a loopback address")
    port = port or free_port(host)
    app, watcher = preview_app(target, settings, host, port, backend)
    state: PreviewState = app.state.preview
    print(announce(f"http://{host}:{port}{LOGIN_PATH}?token={state.login_token}", lang), flush=True)
    for warning in app.state.platform.warnings:  # the local backend: no sandbox around the code
        print(warning.zh if lang == "zh" else warning.en, file=sys.stderr, flush=True)
    import uvicorn

    platform: Platform = app.state.platform

    # uvicorn stops on SIGTERM, then raises it again with the handler it found: let that one end
    # the process by SystemExit, so that the temporary folder below is removed (the default
    # action would kill the process first).
    def _terminated(_sig: int, _frame: object) -> None:
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, _terminated)
    watcher.start()
    try:
        uvicorn.run(
            app,
            host=host,
            port=port,
            log_config=logging_config(log_level),
            log_level=log_level,
            access_log=False,
        )
    finally:
        watcher.stop()
        # The database, the key and the link to a lone package (rmtree removes links, not
        # what they point at).
        shutil.rmtree(platform.settings.data_dir, ignore_errors=True)
    return 0
