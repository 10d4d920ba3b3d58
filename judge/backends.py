"""Choosing a sandbox backend by name."""

from __future__ import annotations

from typing import Literal

from judge.settings import REPO_ROOT
from sandbox.backend import Backend
from sandbox.local import LocalBackend

BackendName = Literal["auto", "local", "docker"]


class BackendUnavailable(Exception):
    pass


def make_backend(name: BackendName) -> tuple[Backend, list[str]]:
    """The backend and any warnings to show the user about the choice."""
    if name == "docker":
        raise BackendUnavailable(
            "the docker backend is not available in this version; use --backend local "
            "(no security boundary) on your own machine"
        )
    backend = LocalBackend(code_root=REPO_ROOT)
    warnings = []
    if name == "auto":
        warnings.append(
            "没有可用的 Docker 沙箱，改用本地后端 no Docker sandbox available: using the local backend, "
            "which is no security boundary"
        )
    return backend, warnings
