from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(scope="package", autouse=True)
def _shared_backend_for_these_tests() -> Iterator[None]:
    """The problems' shared fork-server backend lives as long as these tests, and its ready
    containers go with it, before other packages count the containers of this process."""
    yield
    from tests.factories import close_shared_backend

    close_shared_backend()


@pytest.fixture(scope="module", autouse=True)
def _close_shared_backend() -> Iterator[None]:
    """Overrides the root conftest's per-module close: here one pool serves the whole package."""
    yield
