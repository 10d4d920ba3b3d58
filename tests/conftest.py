from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from judge.expected import ExpectedStore
from tests.paths import run_tmp


@pytest.fixture(scope="module", autouse=True)
def _close_shared_backend() -> Iterator[None]:
    """The shared backend (tests.factories.shared_backend) holds ready containers: they go with
    the module that started them, before a later module of this process counts the process's
    containers (modules run in any order; tests/problems/ overrides this to share one pool)."""
    yield
    from tests.factories import close_shared_backend

    close_shared_backend()


@pytest.fixture(scope="session")
def store(tmp_path_factory: pytest.TempPathFactory) -> ExpectedStore:
    """One reference cache for the run: each problem's reference runs once, in whichever test
    process asks first. Sharing it is safe: entries are keyed by the package's content and the
    backend's runtime, and one process computes a key while the others wait on its lock.
    JUDGE_CACHE_DIR when set (.ci/run sets an empty one, which `judge` subprocesses share too)."""
    named = os.environ.get("JUDGE_CACHE_DIR")
    return ExpectedStore(Path(named) if named else run_tmp(tmp_path_factory) / "expected-cache")


@pytest.fixture(scope="session")
def docker_backend():  # type: ignore[no-untyped-def]
    """The real Docker backend. Without an engine or image the test skips, except under
    JUDGE_REQUIRE_DOCKER=1 (set by .ci/run), where it fails: CI must not pass by skipping."""
    from judge.backends import runner_code
    from judge.core.execution import RUNNER
    from sandbox.docker_backend import DockerBackend
    from sandbox.engine import EngineFailure
    from sandbox.image import ImageError

    try:
        backend = DockerBackend.connect(runner_code(), RUNNER)
    except (EngineFailure, ImageError) as exc:
        if os.environ.get("JUDGE_REQUIRE_DOCKER") == "1":
            pytest.fail(f"JUDGE_REQUIRE_DOCKER=1 but Docker is not usable: {exc}")
        pytest.skip(f"no Docker sandbox: {exc}")
    yield backend
    backend.client.close()


# How long a test of each kind tends to take, in seconds on the CI machine: enough to put the
# long modules first. `make test` hands whole modules to its xdist workers as they free up, so a
# long module handed out last keeps one worker busy while the other has nothing left to do (a
# 70 s browser test at the end cost a minute of one core). xdist's own order (most tests first)
# puts the one-test browser modules last; `--no-loadscope-reorder` in the Makefile keeps this one.
WEIGHTS = {"browser": 20.0, "slow": 6.0, "docker": 2.0}
DEFAULT_WEIGHT = 0.3


def _weight(item: pytest.Item) -> float:
    return max((w for name, w in WEIGHTS.items() if item.get_closest_marker(name)), default=DEFAULT_WEIGHT)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Modules by their estimated length, longest first; the tests of a module keep their order."""
    totals: dict[str, float] = {}
    for item in items:
        totals[item.nodeid.split("::")[0]] = totals.get(item.nodeid.split("::")[0], 0.0) + _weight(item)
    items.sort(key=lambda item: -totals[item.nodeid.split("::")[0]])
