"""Reload the packages when a file of them changes: the pages, Run and Submit then use the files
as they are now (the new content is a new version in the database; expected outputs are cached
by content hash, so an unchanged reference is not run again)."""

from __future__ import annotations

import logging
import threading
from pathlib import Path

from web.platform import Platform
from web.preview.packages import fingerprint, load
from web.preview.state import PreviewState
from web.problems.sync import replace_problems, sync_problems

log = logging.getLogger(__name__)

# How often the files are looked at: a save shows on the page within about a second.
POLL_S = 0.4


def refresh(platform: Platform, state: PreviewState, dirs: list[Path]) -> None:
    """Load the packages again and make the site serve them (a broken one is left out of the
    site and shown on the banner)."""
    version = fingerprint(dirs, platform.settings.cache_dir)
    loaded = load(dirs)
    new = {p.problem.id: p.problem for p in loaded if p.problem is not None}
    replace_problems(platform.problems, new)
    platform.statements.forget()
    sync_problems(platform.factory, platform.problems)
    platform.statements.forget()  # what a page kept between the load and the sync's commit
    state.replace(loaded, version)


class Watcher:
    """A thread that looks at the packages' files every POLL_S and refreshes on a change."""

    def __init__(self, platform: Platform, state: PreviewState, dirs: list[Path]) -> None:
        self._platform, self._state, self._dirs = platform, state, dirs
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="preview-watcher", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def _run(self) -> None:
        while not self._stop.wait(POLL_S):
            try:
                if fingerprint(self._dirs, self._platform.settings.cache_dir) != self._state.version:
                    refresh(self._platform, self._state, self._dirs)
                    log.info("judge preview: reloaded (version %s)", self._state.version)
            except Exception:  # a half-saved file, a database hiccup: keep watching
                log.exception("judge preview: reloading the packages failed; trying again")
