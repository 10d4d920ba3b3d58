"""How sandbox/ is put together inside (its place among the layers is tests/test_layers.py's): the
cold path and the pool share the engine, not each other."""

from __future__ import annotations

from tests.imports import graph


def test_the_cold_path_and_the_pool_share_the_engine_not_each_other() -> None:
    edges = graph(["sandbox"])
    assert (
        "sandbox.engine" in edges["sandbox.docker_cold"] and "sandbox.engine" in edges["sandbox.docker_warm"]
    )
    assert "sandbox.docker_warm" not in edges["sandbox.docker_cold"]
    assert "sandbox.docker_cold" not in edges["sandbox.docker_warm"]
    assert not edges["sandbox.engine"] & {
        "sandbox.docker_backend",
        "sandbox.docker_cold",
        "sandbox.docker_warm",
    }
