"""The practice kit of this server (web.problems.kit serves it): built once per problem set and
kept, in memory and in the cache folder, so that a restarted server does not build it again.

Building runs the reference and the known mistakes of every problem (cached on disk by the
judge), so it costs seconds once, not per download; it can run in the background while the
problem list shows how far it got. The server URL written into it is the platform's public URL
(JUDGE_PUBLIC_URL), never a request's Host header, which the client chooses.
"""

from __future__ import annotations

import logging
import os
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy.orm import Session

from judge.authoring.kit import build_kit, kit_fingerprint, learner_entries, with_files, zip_kit
from judge.authoring.package import Problem
from web.errors import N_, ApiError
from web.judging.judges import JudgeContext
from web.submissions.parts import latest_accepted

KIT_FOLDER = "kit"  # under the judge's cache folder: the built kit's zip, named by its fingerprint

Build = Callable[[Callable[[int, int], None]], bytes]


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


@dataclass(frozen=True, eq=False)
class PracticeKit:
    """The kit for the problems this process offers, pointed at `server`; built by `judge`
    (None: this process judges nothing, so it makes no kit) and kept by `cache`."""

    problems: dict[str, Problem]
    judge: JudgeContext | None
    server: str
    folder: Path  # keeps the built zip across restarts
    cache: KitCache = field(default_factory=KitCache)

    def _recipe(self) -> tuple[str, Build]:
        """The kit's cache key and how to build it."""
        judge = self.judge
        if judge is None:
            raise ApiError(503, "no_judge", N_("This server judges nothing, so it makes no practice kit."))
        # A copy of the list: a reload (web.problems.sync.replace_problems) may change the dict.
        problems = sorted(self.problems.values(), key=lambda p: p.id)
        server = self.server

        def build(steps: Callable[[int, int], None]) -> bytes:
            with tempfile.TemporaryDirectory(prefix="judge-kit-") as tmp:
                return zip_kit(
                    build_kit(Path(tmp), problems, judge.store, judge.backend, server, steps=steps)
                )

        return kit_fingerprint(problems, server), build

    def zip(self) -> bytes:
        key, build = self._recipe()
        return self.cache.get(key, build, self.folder)

    def start(self) -> None:
        """Build the kit in the background unless it is built or being built."""
        key, build = self._recipe()
        self.cache.start(key, build, self.folder)

    def status(self) -> dict[str, object]:
        """Whether the kit is ready to download; starts building it when not (the page polls)."""
        key, _build = self._recipe()
        if not self.cache.ready(key):
            self.start()
        done, total = self.cache.steps
        ready = self.cache.ready(key)
        return {
            "ready": ready,
            "done": total if ready else done,
            "total": total,
            "failed": self.cache.failure,
        }

    def for_learner(self, db: Session, user_id: int) -> bytes:
        """The kit with the learner's latest accepted code of each problem in its file."""
        kit = self.zip()
        problems = sorted(self.problems.values(), key=lambda p: p.id)
        code = {p.id: latest_accepted(db, user_id, p.id) for p in problems}
        files = learner_entries(problems, {pid: c for pid, c in code.items() if c is not None})
        return with_files(kit, files) if files else kit
