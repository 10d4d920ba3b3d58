"""Choosing a backend: auto falls back to local with a warning, docker never falls back,
and a shared server refuses to run without a sandbox."""

from __future__ import annotations

import gc

import pytest

from judge.backends import BackendUnavailable, make_backend, require_sandbox
from judge.core.forked import ForkedBackend
from judge.settings import SandboxSettings

NO_ENGINE = "unix:///tmp/no-docker-engine-here.sock"

# docker-py's unix transport leaks its socket when connect() fails; these tests make it fail.
pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")


def test_auto_without_an_engine_is_local_with_a_warning(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCKER_HOST", NO_ENGINE)
    backend, warnings = make_backend("auto", SandboxSettings())
    gc.collect()
    assert isinstance(backend, ForkedBackend) and not backend.is_sandbox  # forked where safe
    assert len(warnings) == 1 and "no security boundary" in warnings[0] and "Docker" in warnings[0]


def test_docker_without_an_engine_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCKER_HOST", NO_ENGINE)
    with pytest.raises(BackendUnavailable, match="no Docker engine answers"):
        make_backend("docker", SandboxSettings())
    gc.collect()


def test_local_is_local_without_warnings() -> None:
    backend, warnings = make_backend("local", SandboxSettings())
    assert isinstance(backend, ForkedBackend) and backend.name == "local" and warnings == []


def test_a_server_refuses_the_local_backend_unless_allowed() -> None:
    backend, _ = make_backend("local", SandboxSettings())
    with pytest.raises(BackendUnavailable, match="JUDGE_ALLOW_UNSANDBOXED=1"):
        require_sandbox(backend, allow_unsandboxed=False)
    require_sandbox(backend, allow_unsandboxed=True)


@pytest.mark.docker
def test_auto_takes_docker_where_an_engine_answers(docker_backend: object) -> None:
    backend, warnings = make_backend("auto", SandboxSettings())
    assert backend.name == "docker" and backend.is_sandbox and warnings == []
    require_sandbox(backend, allow_unsandboxed=False)
