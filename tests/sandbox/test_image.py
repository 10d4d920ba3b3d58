"""The runtime image: tags follow their inputs, builds are skipped when the tag exists,
and the runner layer carries exactly the code it was made from."""

from __future__ import annotations

from pathlib import Path

import pytest

from judge.backends import runner_code
from judge.core.backend import Limits, RunnerSpec
from sandbox.docker_backend import DockerBackend
from sandbox.engine import Engine
from sandbox.image import build_base, find_base, offline_base_tag, pulled_base_tag, runtime_image

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def test_base_tags_name_their_recipe() -> None:
    assert offline_base_tag().startswith("llm-judge-base:debootstrap-")
    assert pulled_base_tag().startswith("llm-judge-base:dockerfile-")
    assert offline_base_tag() == offline_base_tag()  # a pure function of the inputs


def test_a_build_is_skipped_when_its_tag_exists(docker_backend: DockerBackend) -> None:
    base = find_base(docker_backend.client)
    assert base is not None
    lines: list[str] = []
    tag = build_base(docker_backend.client, offline=base == offline_base_tag(), log=lines.append)
    assert tag == base and lines == [f"{tag} exists; nothing to build"]


def test_the_runner_layer_follows_the_code(docker_backend: DockerBackend, tmp_path: Path) -> None:
    client = docker_backend.client
    assert runtime_image(client, runner_code()) == docker_backend.image  # found, not rebuilt
    extra = tmp_path / "extra"
    extra.mkdir()
    (extra / "__init__.py").write_text("")
    (extra / "probe.py").write_text("VALUE = 'layer-1'\n")
    first = runtime_image(client, {**runner_code(), "extra": extra})
    (extra / "probe.py").write_text("VALUE = 'layer-2'\n")
    second = runtime_image(client, {**runner_code(), "extra": extra})
    try:
        assert len({docker_backend.image, first, second}) == 3
        reads_the_layer = RunnerSpec(("-c", "import extra.probe, sys; sys.stdout.write(extra.probe.VALUE)"))
        out = DockerBackend(Engine(client, second), reads_the_layer).run(b"", Limits())
        assert out.result == b"layer-2", out.log
    finally:
        for tag in (first, second):
            client.images.remove(tag, force=True)
