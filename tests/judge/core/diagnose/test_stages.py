"""The first stage that differs: a model's intermediate results observed under `stages`, in the
order it computes them; the diagnosis names the first one that fails, and what lies before it."""

from __future__ import annotations

import torch

from tests.judge.core.diagnose.factories import diagnoses, kinds, tensor


def layer_stages(n: int, mixer: str) -> list[str]:
    p = f"layers.{n}."
    blocks = [p + "input_layernorm", p + mixer, p + "post_attention_layernorm", p + "mlp"]
    return [f"{b} (output)" for b in blocks] + [f"layers.{n} (output)"]


NAMES = [
    "embeddings",
    *layer_stages(0, "linear_attn"),
    *layer_stages(1, "self_attn"),
    "norm (output)",
    "logits",
]


def model_stages(names: list[str] = NAMES) -> dict[str, torch.Tensor]:
    return {name: tensor(2, 3, 8, seed=i) for i, name in enumerate(names)}


def wrong_from(stages: dict[str, torch.Tensor], first: str) -> dict[str, torch.Tensor]:
    """The same stages, every one from `first` on changed (a mistake propagates)."""
    names = list(stages)
    start = names.index(first)
    return {n: t + 1.0 if i >= start else t.clone() for i, (n, t) in enumerate(stages.items())}


def test_names_the_first_stage_that_differs_and_what_lies_before_it() -> None:
    want = model_stages()
    (d, *_) = diagnoses({"stages": want}, {"stages": wrong_from(want, "layers.1.self_attn (output)")})
    assert d.kind == "first_stage"
    assert (
        "`layers.1.self_attn` (layer 1, full attention)" in d.text.en and "whose input is right" in d.text.en
    )
    assert "RoPE" in d.text.en and "RoPE" in d.text.zh
    (d, *_) = diagnoses({"stages": want}, {"stages": wrong_from(want, "layers.0.linear_attn (output)")})
    assert "the delta rule" in d.text.en


def test_the_first_norm_of_the_first_layer() -> None:
    want = model_stages()
    (d, *_) = diagnoses({"stages": want}, {"stages": wrong_from(want, "layers.0.input_layernorm (output)")})
    assert "`layers.0.input_layernorm` (layer 0, linear attention)" in d.text.en and "(1 + w)" in d.text.en


def test_the_head_when_every_hidden_state_is_right() -> None:
    want = model_stages()
    (d, *_) = diagnoses({"stages": want}, {"stages": wrong_from(want, "logits")})
    assert "`logits`" in d.text.en and "every hidden state is right" in d.text.en


def test_a_layer_of_the_other_kind() -> None:
    want = model_stages()
    swapped = [
        "embeddings",
        *layer_stages(0, "self_attn"),
        *layer_stages(1, "linear_attn"),
        "norm (output)",
        "logits",
    ]
    (d, *_) = diagnoses({"stages": want}, {"stages": model_stages(swapped)})
    assert d.kind == "layer_schedule"
    assert "layer 0 is linear attention (`linear_attn`)" in d.text.en and "layer_types" in d.text.en


def test_a_later_decoding_call_points_at_what_the_cache_carries() -> None:
    calls = ["prefill", "step 1", "step 2"]
    names = [f"{c}: {m} (output)" for c in calls for m in ("layers.0.linear_attn", "layers.1.self_attn")]
    want = model_stages(names)
    (d, *_) = diagnoses({"stages": want}, {"stages": wrong_from(want, "step 1: layers.1.self_attn (output)")})
    assert d.kind == "cache_carry" and "in step 1" in d.text.en and "KV cache" in d.text.en
    (d, *_) = diagnoses(
        {"stages": want}, {"stages": wrong_from(want, "step 1: layers.0.linear_attn (output)")}
    )
    assert d.kind == "cache_carry" and "conv state" in d.text.en
    # The first call going wrong is not about the cache: it is that call's own stage.
    (d, *_) = diagnoses(
        {"stages": want}, {"stages": wrong_from(want, "prefill: layers.0.linear_attn (output)")}
    )
    assert d.kind == "first_stage" and "in prefill" in d.text.en


def test_within_tolerance_is_right() -> None:
    want = model_stages()
    got = {n: t + 1e-9 for n, t in want.items()}
    assert kinds({"stages": want}, {"stages": got}) == []


def test_stages_elsewhere_in_the_tree_are_not_read() -> None:
    want = model_stages()
    assert "first_stage" not in kinds({"other": want}, {"other": wrong_from(want, "logits")})
