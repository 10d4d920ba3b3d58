"""Problem 201 beyond validate: the committed checkpoints are what make_checkpoint.py writes and
what transformers writes for the same configs; the reference reads checkpoints that transformers
saves (one file and sharded) and problem 217's as transformers loads them; find_model falls back
on the kit's tiny checkpoint beside the package and says so on stderr; the statement's example
holds on 217's checkpoint."""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import types
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file
from transformers import Qwen3_5Config, Qwen3_5TextConfig
from transformers import logging as hf_logging
from transformers.models.qwen3_5.modeling_qwen3_5 import Qwen3_5ForCausalLM, Qwen3_5ForConditionalGeneration

from judge.authoring.package import Problem
from tests.paths import REPO_ROOT
from tests.problems.course_package import course_package, forget_course_package

PROBLEM = Problem(REPO_ROOT / "problems" / "201-weights")
DATA = PROBLEM.root / "data"
MULTIMODAL = DATA / "home" / "models" / "qwen3.5"
SHARDED = DATA / "sharded"
TEXT_ONLY = DATA / "text-only"
CHECKPOINT_217 = REPO_ROOT / "problems" / "217-qwen35" / "checkpoint"


@pytest.fixture
def weights(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[types.ModuleType]:
    """201's reference as the course package's qwen.weights, 204's norms beside it."""
    monkeypatch.syspath_prepend(str(course_package(tmp_path, ["201", "204"])))
    yield importlib.import_module("qwen.weights")
    forget_course_package()


def tensors(folder: Path) -> dict[str, torch.Tensor]:
    out: dict[str, torch.Tensor] = {}
    for file in sorted(folder.glob("*.safetensors")):
        out.update(load_file(file))
    return out


def test_the_script_writes_the_committed_checkpoints(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("make_checkpoint_201", PROBLEM.root / "make_checkpoint.py")
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    script.main(tmp_path)
    written = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
    committed = sorted(p.relative_to(DATA) for p in DATA.rglob("*") if p.is_file())
    assert written == committed
    for rel in committed:
        assert (tmp_path / rel).read_bytes() == (DATA / rel).read_bytes(), rel
    # Small enough to travel in every job and in the kit.
    assert sum((DATA / rel).stat().st_size for rel in committed) < 64 * 1024


@pytest.mark.parametrize("folder", [MULTIMODAL, SHARDED], ids=["multimodal", "sharded"])
def test_transformers_writes_the_same_multimodal_layout(folder: Path, tmp_path: Path) -> None:
    """Qwen3_5ForConditionalGeneration built from the committed config writes the same config.json
    and the same tensor names and shapes (but for mtp., which it does not build), and loads the
    committed files with nothing missing or mismatched."""
    hf_logging.set_verbosity_error()
    mine = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    config = Qwen3_5Config(
        text_config=mine["text_config"],
        vision_config=mine["vision_config"],
        tie_word_embeddings=mine["tie_word_embeddings"],
    )
    Qwen3_5ForConditionalGeneration(config).to(torch.bfloat16).save_pretrained(tmp_path)  # type: ignore[no-untyped-call]
    assert json.loads((tmp_path / "config.json").read_text(encoding="utf-8")) == mine
    ours = {k: tuple(t.shape) for k, t in tensors(folder).items() if not k.startswith("mtp.")}
    theirs = {k: tuple(t.shape) for k, t in tensors(tmp_path).items()}
    assert ours == theirs
    assert any(k.startswith("mtp.") for k in tensors(folder))
    _, info = Qwen3_5ForConditionalGeneration.from_pretrained(folder, output_loading_info=True)
    assert not any(info[k] for k in ("missing_keys", "unexpected_keys", "mismatched_keys"))
    if folder == SHARDED:
        index = json.loads((folder / "model.safetensors.index.json").read_text(encoding="utf-8"))
        assert set(index["weight_map"].values()) == {p.name for p in folder.glob("*.safetensors")}
        assert len(set(index["weight_map"].values())) == 2


def test_transformers_writes_the_same_text_only_layout(tmp_path: Path) -> None:
    mine = json.loads((TEXT_ONLY / "config.json").read_text(encoding="utf-8"))
    fields = {
        k: v
        for k, v in mine.items()
        if k not in ("architectures", "dtype", "model_type", "transformers_version")
    }
    Qwen3_5ForCausalLM(Qwen3_5TextConfig(**fields)).to(torch.bfloat16).save_pretrained(tmp_path)  # type: ignore[no-untyped-call]
    assert json.loads((tmp_path / "config.json").read_text(encoding="utf-8")) == mine
    ours = {k: tuple(t.shape) for k, t in tensors(TEXT_ONLY).items()}
    assert ours == {k: tuple(t.shape) for k, t in tensors(tmp_path).items()}


def test_the_reference_reads_what_transformers_saves(weights: types.ModuleType, tmp_path: Path) -> None:
    """A multimodal checkpoint saved by transformers, in one file and in shards: Config gives the
    text config's fields, load_weights the text model's state dict by Qwen3_5TextModel's names
    (plus the untied lm_head), bit for bit and in the dtype saved."""
    hf_logging.set_verbosity_error()
    text = json.loads((MULTIMODAL / "config.json").read_text(encoding="utf-8"))["text_config"]
    vision = json.loads((MULTIMODAL / "config.json").read_text(encoding="utf-8"))["vision_config"]
    torch.manual_seed(0)
    model = Qwen3_5ForConditionalGeneration(
        Qwen3_5Config(text_config=text, vision_config=vision, tie_word_embeddings=False)
    ).to(torch.bfloat16)
    want = {k: v for k, v in model.model.language_model.state_dict().items()}
    want["lm_head.weight"] = model.lm_head.weight.detach()
    for name, shard in (("one", None), ("shards", "2KB")):
        out = tmp_path / name
        if shard is None:
            model.save_pretrained(out)  # type: ignore[no-untyped-call]
        else:
            model.save_pretrained(out, max_shard_size=shard)  # type: ignore[no-untyped-call]
            assert (out / "model.safetensors.index.json").exists() and len(
                list(out.glob("*.safetensors"))
            ) > 2
        cfg = weights.Config.load(out)
        saved = json.loads((out / "config.json").read_text(encoding="utf-8"))["text_config"]
        assert {k: getattr(cfg, k) for k in saved} == saved
        W = weights.load_weights(out)
        assert sorted(W) == sorted(want), name
        assert all(W[k].dtype == torch.bfloat16 and torch.equal(W[k], want[k]) for k in want), name


def test_217s_checkpoint_reads_as_transformers_loads_it(weights: types.ModuleType) -> None:
    hf_logging.set_verbosity_error()
    theirs = Qwen3_5ForCausalLM.from_pretrained(CHECKPOINT_217, dtype=torch.bfloat16)
    cfg = weights.Config.load(CHECKPOINT_217)
    assert cfg.hidden_size == theirs.config.hidden_size == 64
    assert cfg.layer_types == theirs.config.layer_types
    assert cfg.linear_value_head_dim == theirs.config.linear_value_head_dim
    W = weights.load_weights(CHECKPOINT_217)
    want = theirs.model.state_dict()
    assert sorted(W) == sorted(want) and "lm_head.weight" not in W
    assert all(torch.equal(W[k], want[k]) for k in want)


def test_the_statement_example(
    weights: types.ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    norm_module = importlib.import_module("qwen.norm")
    monkeypatch.delenv("QWEN_MODEL", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    cfg = weights.Config.load(CHECKPOINT_217)
    assert (cfg.hidden_size, cfg.layer_types[:2]) == (64, ["linear_attention", "linear_attention"])
    W = weights.load_weights(CHECKPOINT_217)
    assert W["layers.0.input_layernorm.weight"].dtype == torch.bfloat16 and "lm_head.weight" not in W
    norm = weights.load(norm_module.RMSNorm(cfg.hidden_size, cfg.rms_norm_eps), W, "norm.")
    assert norm.weight.dtype == torch.float32 and torch.equal(norm.weight, W["norm.weight"].float())
    with pytest.raises(RuntimeError) as exc:
        weights.load(norm_module.RMSNorm(cfg.hidden_size), W, "layers.0.")
    assert "weight" in str(exc.value) and "input_layernorm.weight" in str(exc.value)


def _find_model(course: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if k != "QWEN_MODEL"} | env
    return subprocess.run(
        [sys.executable, "-c", "from qwen.weights import find_model; print(find_model())"],
        cwd=course,
        env=environ | {"PYTHONPATH": str(course)},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_find_model_falls_back_on_the_kits_tiny_checkpoint(tmp_path: Path) -> None:
    """In a kit (qwen/ beside tiny-qwen3.5), with no QWEN_MODEL and nothing in ~/models/qwen3.5,
    find_model returns the tiny checkpoint and says so in one line on stderr; QWEN_MODEL and the
    default folder still come first; without the tiny one the error names both ways to fix it."""
    course = course_package(tmp_path, ["201"])
    forget_course_package()
    home = tmp_path / "home"
    home.mkdir()
    tiny = course / "tiny-qwen3.5"
    shutil.copytree(CHECKPOINT_217, tiny)

    done = _find_model(course, {"HOME": str(home)})
    assert done.returncode == 0, done.stderr
    assert Path(done.stdout.strip()) == tiny.resolve()
    (line,) = done.stderr.strip().splitlines()
    assert "QWEN_MODEL" in line and "tiny" in line

    default = home / "models" / "qwen3.5"
    shutil.copytree(MULTIMODAL, default)
    done = _find_model(course, {"HOME": str(home)})
    assert Path(done.stdout.strip()) == default and done.stderr == ""
    done = _find_model(course, {"HOME": str(home), "QWEN_MODEL": str(TEXT_ONLY)})
    assert Path(done.stdout.strip()) == TEXT_ONLY and done.stderr == ""

    shutil.rmtree(default)
    shutil.rmtree(tiny)
    done = _find_model(course, {"HOME": str(home)})
    assert done.returncode != 0 and "FileNotFoundError" in done.stderr
    assert "QWEN_MODEL" in done.stderr and "~/models/qwen3.5" in done.stderr
