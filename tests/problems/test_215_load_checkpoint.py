"""Problem 215 beyond validate: nn.Module.load_state_dict is refused, the guard never leaks, and a
checkpoint in the real Qwen3.5 layout loads as transformers loads it."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from torch import nn

from judge.authoring.package import Problem
from judge.core.casekit import Rng
from judge.core.runner.guards import ForbiddenAPIError
from judge.core.verdicts import Verdict
from judge.expected import ExpectedStore
from tests.factories import failing_cases, judge_problem, mutant_source, source_module
from tests.paths import REPO_ROOT

PROBLEM = Problem(REPO_ROOT / "problems" / "215-load-checkpoint")

BUILTIN = """
def load_checkpoint(model, state_dict, prefix="model.", tied=None, strict=True):
    sd = {k[len(prefix):] if k.startswith(prefix) else k: v for k, v in state_dict.items()}
    if "lm_head.weight" not in sd:
        sd["lm_head.weight"] = sd["embed_tokens.weight"]
    try:
        result = model.load_state_dict(sd, strict=strict)
    except RuntimeError:
        ON_ERROR
    return {"loaded": sorted(sd), "missing": [], "unexpected": [], "mismatched": []}
"""


@pytest.mark.slow
def test_builtin_load_state_dict_is_forbidden_even_if_the_error_is_caught(store: ExpectedStore) -> None:
    report = judge_problem(PROBLEM, BUILTIN.replace("ON_ERROR", "pass"), store)
    case = next(c for c in report.cases if c.name == "full_load_bf16")
    assert case.verdict == Verdict.WA
    assert "torch.nn.Module.load_state_dict" in case.message


def test_guard_is_lifted_after_the_call() -> None:
    cases = PROBLEM.cases_module
    original = nn.Module.__dict__["load_state_dict"]

    class Cheat:
        @staticmethod
        def load_checkpoint(model, state_dict, **kwargs):  # type: ignore[no-untyped-def]
            model.load_state_dict({}, strict=False)

    with pytest.raises(ForbiddenAPIError):
        cases.full_load_bf16(Cheat, Rng(0))
    assert nn.Module.__dict__["load_state_dict"] is original
    assert nn.Module.__dict__["_load_from_state_dict"] is not None
    # The case's own model still loads normally once the learner's call is over.
    m = cases.Toy()
    m.load_state_dict(m.state_dict())


def test_statement_example_matches_the_reference() -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("ref215", PROBLEM.file("reference.py"))
    assert spec and spec.loader
    ref = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ref)

    class Tiny(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.embed_tokens = nn.Embedding(4, 2)
            self.norm = nn.LayerNorm(2)
            self.lm_head = nn.Linear(2, 4, bias=False)
            self.lm_head.weight = self.embed_tokens.weight

    m = Tiny()
    sd = {
        "model.embed_tokens.weight": torch.randn(4, 2, dtype=torch.bfloat16),
        "model.norm.weight": torch.ones(3),
        "model.extra.bias": torch.zeros(2),
    }
    assert ref.load_checkpoint(m, sd, strict=False) == {
        "loaded": ["embed_tokens.weight", "lm_head.weight"],
        "missing": ["norm.bias"],
        "unexpected": ["extra.bias"],
        "mismatched": ["norm.weight: (3,) vs (2,)"],
        "ignored": [],
    }
    assert m.embed_tokens.weight.dtype == torch.float32 and m.lm_head.weight is m.embed_tokens.weight
    with pytest.raises(ValueError) as exc:
        ref.load_checkpoint(m, sd)
    assert all(name in str(exc.value) for name in ("norm.bias", "extra.bias", "norm.weight"))

    qwen35 = {
        "model.language_model.embed_tokens.weight": torch.randn(4, 2),
        "model.language_model.norm.weight": torch.ones(2),
        "model.language_model.norm.bias": torch.zeros(2),
        "model.visual.merger.linear_fc1.weight": torch.randn(2, 2),
        "mtp.fc.weight": torch.randn(2, 4),
    }
    assert ref.load_checkpoint(m, qwen35, prefix="model.language_model.") == {
        "loaded": ["embed_tokens.weight", "lm_head.weight", "norm.bias", "norm.weight"],
        "missing": [],
        "unexpected": [],
        "mismatched": [],
        "ignored": ["model.visual.merger.linear_fc1.weight", "mtp.fc.weight"],
    }


def test_strict_raises_on_a_single_kind_of_problem() -> None:
    """`missing and unexpected and mismatched` raised only when all three kinds were present."""
    source = mutant_source(PROBLEM, "load_checkpoint/9:boolop#2")
    # ignore_rules' strict call has one missing tensor beside ignored keys: a single kind too.
    assert set(failing_cases(PROBLEM, source)) == {"strict_single_problem", "ignore_rules"}
    case = next(c for c in PROBLEM.cases if c.name == "strict_single_problem")
    expected = case.fn(source_module("reference", PROBLEM.reference.source()), Rng(case.seed))
    got = case.fn(source_module("mutant", source), Rng(case.seed))
    for kind in ("only_missing", "only_unexpected", "only_mismatched"):
        assert expected[kind]["raised_value_error"] and expected[kind]["model_changed"] == "none", kind
        assert not got[kind]["raised_value_error"] and got[kind]["model_changed"] != "none", kind


def test_state_dict_without_keep_vars_is_declared_equivalent() -> None:
    """Detached views share the parameters' storage: copy_ into them loads the same model."""
    assert failing_cases(PROBLEM, mutant_source(PROBLEM, "load_checkpoint/0:bool")) == {}
    assert {e.id for e in PROBLEM.spec.mutants.equivalent} == {
        "load_checkpoint/0:bool",
        "load_checkpoint/2.1:default-arg",
    }


def test_prefix_truthiness_is_declared_equivalent() -> None:
    """`if prefix and key.startswith(prefix)` with the default tested instead: for every string
    prefix, the empty one included, the same names come out."""
    assert failing_cases(PROBLEM, mutant_source(PROBLEM, "load_checkpoint/2.1:default-arg")) == {}


def test_tied_names_are_read_from_the_argument() -> None:
    """The tied names hard-coded (mutant 32:25, wrong/hardcoded_tied_names): only the case that
    loads a model with Meta Llama's names through tied=("output.weight", ...) catches it."""
    assert set(failing_cases(PROBLEM, mutant_source(PROBLEM, "load_checkpoint/4.0:default-arg"))) == {
        "one_loader_many_checkpoints"
    }


def test_a_real_qwen35_checkpoint_loads_what_transformers_loads(tmp_path: Path) -> None:
    """A checkpoint saved by transformers' multimodal Qwen3_5ForConditionalGeneration (text model
    under model.language_model., vision tower under model.visual., the tied lm_head left out),
    with an mtp. head added as in Qwen's published checkpoints: the reference, given
    prefix="model.language_model.", loads exactly the tensors Qwen3_5ForCausalLM.from_pretrained
    loads, and lists the visual and mtp keys, which from_pretrained drops, as ignored."""
    from safetensors.torch import load_file, save_file
    from transformers import Qwen3_5Config
    from transformers.models.qwen3_5.modeling_qwen3_5 import (
        Qwen3_5ForCausalLM,
        Qwen3_5ForConditionalGeneration,
    )

    text = {
        "hidden_size": 16,
        "intermediate_size": 32,
        "num_hidden_layers": 2,
        "layer_types": ["linear_attention", "full_attention"],
        "num_attention_heads": 2,
        "num_key_value_heads": 1,
        "head_dim": 8,
        "linear_num_key_heads": 2,
        "linear_num_value_heads": 2,
        "linear_key_head_dim": 8,
        "linear_value_head_dim": 8,
        "vocab_size": 64,
        "tie_word_embeddings": True,
    }
    vision = {
        "depth": 1,
        "hidden_size": 16,
        "intermediate_size": 16,
        "num_heads": 2,
        "out_hidden_size": 16,
        "patch_size": 2,
        "spatial_merge_size": 1,
        "temporal_patch_size": 1,
    }
    torch.manual_seed(0)
    config = Qwen3_5Config(text_config=text, vision_config=vision, tie_word_embeddings=True)
    Qwen3_5ForConditionalGeneration(config).save_pretrained(tmp_path)  # type: ignore[no-untyped-call]
    (file,) = tmp_path.glob("*.safetensors")
    sd = load_file(file)
    sd["mtp.fc.weight"] = torch.randn(16, 32)
    sd["mtp.layers.0.input_layernorm.weight"] = torch.randn(16)
    save_file(sd, file, metadata={"format": "pt"})
    assert any(k.startswith("model.visual.") for k in sd) and "lm_head.weight" not in sd

    theirs, info = Qwen3_5ForCausalLM.from_pretrained(tmp_path, output_loading_info=True)
    assert not any(info[k] for k in ("missing_keys", "unexpected_keys", "mismatched_keys"))

    # Ours: a fresh text model with other random weights, filled by the reference's loader.
    ref = source_module("reference", PROBLEM.reference.source())
    torch.manual_seed(1)
    ours = Qwen3_5ForCausalLM(config.text_config)  # type: ignore[no-untyped-call]
    report = ref.load_checkpoint(ours.model, sd, prefix="model.language_model.")
    names = sorted(ours.model.state_dict())
    assert report["loaded"] == names and report["ignored"] == sorted(
        k for k in sd if k.startswith(("model.visual.", "mtp."))
    )
    assert report["missing"] == report["unexpected"] == report["mismatched"] == []
    want = theirs.model.state_dict()
    assert all(torch.equal(t, want[n]) for n, t in ours.model.state_dict().items())

    # The default prefix loads nothing from this layout.
    fresh = Qwen3_5ForCausalLM(config.text_config)  # type: ignore[no-untyped-call]
    nothing = ref.load_checkpoint(fresh.model, sd, strict=False)
    assert nothing["loaded"] == [] and nothing["missing"] == names
    assert all(n.startswith("language_model.") for n in nothing["unexpected"])
