from __future__ import annotations

from pathlib import Path

import pytest

from judge.expected import ExpectedStore


@pytest.fixture(scope="session")
def store(tmp_path_factory: pytest.TempPathFactory) -> ExpectedStore:
    """One reference cache for the session: each problem's reference runs once."""
    return ExpectedStore(Path(tmp_path_factory.mktemp("expected-cache")))
