"""Where the tests find the clone they test (the folder above tests/)."""

from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent


def run_tmp(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The test run's root temporary folder, shared by its xdist workers (each worker's own
    basetemp is a child of it): the place for what one process builds and the others reuse."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if base.name.startswith("popen-gw") else base
