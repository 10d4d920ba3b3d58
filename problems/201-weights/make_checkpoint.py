"""Write problem 201's tiny checkpoints into data/:

    .venv/bin/python problems/201-weights/make_checkpoint.py

- data/home/models/qwen3.5/: the layout of Qwen's published Qwen3.5 checkpoints, as transformers'
  Qwen3_5ForConditionalGeneration saves it: config.json with the text model's fields under
  "text_config" and the vision tower's under "vision_config"; model.safetensors with the text
  model under "model.language_model.", the vision tower under "model.visual.", an untied
  "lm_head.weight", and a few "mtp." tensors (the multi-token-prediction head Qwen ships and
  transformers does not build). It sits in a home folder's models/qwen3.5, the folder
  find_model() looks in by default.
- data/sharded/: the same layout, tied (no lm_head.weight), split over two shards named by
  model.safetensors.index.json, as save_pretrained writes a checkpoint larger than its shard size.
- data/text-only/: a text-only checkpoint as Qwen3_5ForCausalLM saves it (the layout of problem
  217's checkpoint): the config's fields at the top, the weights under "model.", tied.

tests/problems/test_201_weights.py checks that this script reproduces the committed bytes and that
transformers 5.23 writes the same config.json and the same tensor names and shapes (mtp. aside).

Torch and the standard library only, every number from one seeded generator. The tensors are bf16
as Qwen ships them, but for linear attention's A_log, written in fp32, so that "dtype as stored"
has two dtypes to keep. The norms' weights are N(0, 0.15²) and the rest N(0, 0.5²): the values are
only there to be loaded, never run.
"""

from __future__ import annotations

import json
import struct
import sys
from pathlib import Path

import torch

OUT = Path(__file__).resolve().parent / "data"
SEED = 201

ROPE = {"partial_rotary_factor": 0.25, "rope_theta": 10000000.0, "rope_type": "default"}


def text_config(**fields: object) -> dict[str, object]:
    """The fields transformers' Qwen3_5TextConfig writes, with these sizes."""
    config: dict[str, object] = {
        "attention_bias": False,
        "attention_dropout": 0.0,
        "bos_token_id": None,
        "eos_token_id": None,
        "head_dim": 4,
        "hidden_act": "silu",
        "hidden_size": 8,
        "initializer_range": 0.02,
        "intermediate_size": 16,
        "layer_types": ["linear_attention", "full_attention"],
        "linear_conv_kernel_dim": 4,
        "linear_key_head_dim": 4,
        "linear_num_key_heads": 1,
        "linear_num_value_heads": 2,
        "linear_value_head_dim": 4,
        "max_position_embeddings": 32768,
        "model_type": "qwen3_5_text",
        "num_attention_heads": 2,
        "num_hidden_layers": 2,
        "num_key_value_heads": 1,
        "pad_token_id": None,
        "rms_norm_eps": 1e-06,
        "rope_parameters": dict(ROPE),
        "tie_word_embeddings": False,
        "use_cache": True,
        "vocab_size": 16,
    }
    config.update(fields)
    return config


VISION = {
    "depth": 1,
    "hidden_act": "gelu_pytorch_tanh",
    "hidden_size": 8,
    "in_channels": 3,
    "initializer_range": 0.02,
    "intermediate_size": 8,
    "model_type": "qwen3_5_vision",
    "num_heads": 2,
    "num_position_embeddings": 4,
    "out_hidden_size": 8,
    "patch_size": 2,
    "rope_parameters": {"rope_theta": 10000.0, "rope_type": "axial"},
    "spatial_merge_size": 1,
    "temporal_patch_size": 1,
}


def multimodal_config(tied: bool) -> dict[str, object]:
    """config.json as Qwen3_5ForConditionalGeneration.save_pretrained writes it."""
    return {
        "architectures": ["Qwen3_5ForConditionalGeneration"],
        "dtype": "bfloat16",
        "image_token_id": 248056,
        "model_type": "qwen3_5",
        "text_config": text_config(tie_word_embeddings=tied),
        "tie_word_embeddings": tied,
        "transformers_version": "5.23.0",
        "video_token_id": 248057,
        "vision_config": dict(VISION),
        "vision_end_token_id": 248054,
        "vision_start_token_id": 248053,
    }


TEXT_ONLY = {
    "architectures": ["Qwen3_5ForCausalLM"],
    "dtype": "bfloat16",
    "transformers_version": "5.23.0",
    **text_config(
        head_dim=6,
        hidden_size=12,
        intermediate_size=24,
        layer_types=["linear_attention", "linear_attention", "full_attention"],
        linear_key_head_dim=6,
        linear_value_head_dim=6,
        num_hidden_layers=3,
        rms_norm_eps=1e-05,
        tie_word_embeddings=True,
        vocab_size=24,
    ),
}


def text_weights(config: dict, prefix: str, gen: torch.Generator) -> dict[str, torch.Tensor]:
    """The text model's tensors (Qwen3_5TextModel's names under `prefix`), and lm_head.weight if untied."""

    def normal(*shape: int, std: float = 0.5) -> torch.Tensor:
        return (torch.randn(shape, generator=gen) * std).to(torch.bfloat16)

    d, inter, vocab = config["hidden_size"], config["intermediate_size"], config["vocab_size"]
    heads, kv_heads, hd = config["num_attention_heads"], config["num_key_value_heads"], config["head_dim"]
    nk, nv = config["linear_num_key_heads"], config["linear_num_value_heads"]
    dk, dv = config["linear_key_head_dim"], config["linear_value_head_dim"]
    conv_dim = 2 * nk * dk + nv * dv

    sd = {prefix + "embed_tokens.weight": normal(vocab, d)}
    for i, kind in enumerate(config["layer_types"]):
        p = f"{prefix}layers.{i}."
        sd[p + "input_layernorm.weight"] = normal(d, std=0.15)
        if kind == "linear_attention":
            a = p + "linear_attn."
            sd[a + "in_proj_qkv.weight"] = normal(conv_dim, d)
            sd[a + "in_proj_z.weight"] = normal(nv * dv, d)
            sd[a + "in_proj_b.weight"] = normal(nv, d)
            sd[a + "in_proj_a.weight"] = normal(nv, d)
            sd[a + "conv1d.weight"] = normal(conv_dim, 1, config["linear_conv_kernel_dim"])
            sd[a + "dt_bias"] = normal(nv)
            sd[a + "A_log"] = torch.log(torch.rand(nv, generator=gen) * 15.0 + 1.0)  # fp32
            sd[a + "norm.weight"] = normal(dv, std=0.15) + 1
            sd[a + "out_proj.weight"] = normal(d, nv * dv)
        else:
            a = p + "self_attn."
            sd[a + "q_proj.weight"] = normal(2 * heads * hd, d)
            sd[a + "k_proj.weight"] = normal(kv_heads * hd, d)
            sd[a + "v_proj.weight"] = normal(kv_heads * hd, d)
            sd[a + "q_norm.weight"] = normal(hd, std=0.15)
            sd[a + "k_norm.weight"] = normal(hd, std=0.15)
            sd[a + "o_proj.weight"] = normal(d, heads * hd)
        sd[p + "post_attention_layernorm.weight"] = normal(d, std=0.15)
        sd[p + "mlp.gate_proj.weight"] = normal(inter, d)
        sd[p + "mlp.up_proj.weight"] = normal(inter, d)
        sd[p + "mlp.down_proj.weight"] = normal(d, inter)
    sd[prefix + "norm.weight"] = normal(d, std=0.15)
    if not config["tie_word_embeddings"]:
        sd["lm_head.weight"] = normal(vocab, d)
    return sd


def vision_weights(config: dict, gen: torch.Generator) -> dict[str, torch.Tensor]:
    """Qwen3_5VisionModel's tensors under model.visual. (the names and shapes transformers saves)."""

    def normal(*shape: int) -> torch.Tensor:
        return (torch.randn(shape, generator=gen) * 0.5).to(torch.bfloat16)

    h, inter, out = config["hidden_size"], config["intermediate_size"], config["out_hidden_size"]
    merged = h * config["spatial_merge_size"] ** 2
    v = "model.visual."
    sd = {
        v + "patch_embed.proj.weight": normal(
            h,
            config["in_channels"],
            config["temporal_patch_size"],
            config["patch_size"],
            config["patch_size"],
        ),
        v + "patch_embed.proj.bias": normal(h),
        v + "pos_embed.weight": normal(config["num_position_embeddings"], h),
    }
    for i in range(config["depth"]):
        b = f"{v}blocks.{i}."
        for norm in ("norm1", "norm2"):
            sd[b + norm + ".weight"], sd[b + norm + ".bias"] = normal(h), normal(h)
        sd[b + "attn.qkv.weight"], sd[b + "attn.qkv.bias"] = normal(3 * h, h), normal(3 * h)
        sd[b + "attn.proj.weight"], sd[b + "attn.proj.bias"] = normal(h, h), normal(h)
        sd[b + "mlp.linear_fc1.weight"], sd[b + "mlp.linear_fc1.bias"] = normal(inter, h), normal(inter)
        sd[b + "mlp.linear_fc2.weight"], sd[b + "mlp.linear_fc2.bias"] = normal(h, inter), normal(h)
    sd[v + "merger.norm.weight"], sd[v + "merger.norm.bias"] = normal(h), normal(h)
    sd[v + "merger.linear_fc1.weight"], sd[v + "merger.linear_fc1.bias"] = (
        normal(merged, merged),
        normal(merged),
    )
    sd[v + "merger.linear_fc2.weight"], sd[v + "merger.linear_fc2.bias"] = normal(out, merged), normal(out)
    return sd


def mtp_weights(config: dict, gen: torch.Generator) -> dict[str, torch.Tensor]:
    """Some of the multi-token-prediction head's tensors, under names of the published checkpoints:
    its layer is named like the text model's layers, so a loader that strips "mtp." would
    overwrite layers.0 with it."""

    def normal(*shape: int) -> torch.Tensor:
        return (torch.randn(shape, generator=gen) * 0.5).to(torch.bfloat16)

    d, inter = config["hidden_size"], config["intermediate_size"]
    return {
        "mtp.fc.weight": normal(d, 2 * d),
        "mtp.pre_fc_norm_embedding.weight": normal(d),
        "mtp.pre_fc_norm_hidden.weight": normal(d),
        "mtp.layers.0.input_layernorm.weight": normal(d),
        "mtp.layers.0.post_attention_layernorm.weight": normal(d),
        "mtp.layers.0.mlp.down_proj.weight": normal(d, inter),
        "mtp.norm.weight": normal(d),
    }


def safetensors_bytes(tensors: dict[str, torch.Tensor]) -> bytes:
    """The safetensors layout: u64 little-endian header size, a JSON header padded with spaces
    to a multiple of 8 bytes, then the raw bytes of each tensor in the header's order."""
    if sys.byteorder != "little":
        raise SystemExit("safetensors is little-endian; write the checkpoint on a little-endian machine")
    names = {torch.bfloat16: "BF16", torch.float32: "F32"}
    header: dict[str, object] = {"__metadata__": {"format": "pt"}}
    blobs, offset = [], 0
    for name in sorted(tensors):
        t = tensors[name].contiguous()
        data = bytes(t.reshape(-1).view(torch.uint8).tolist())
        header[name] = {
            "dtype": names[t.dtype],
            "shape": list(t.shape),
            "data_offsets": [offset, offset + len(data)],
        }
        blobs.append(data)
        offset += len(data)
    head = json.dumps(header, separators=(",", ":")).encode("utf-8")
    head += b" " * (-len(head) % 8)
    return struct.pack("<Q", len(head)) + head + b"".join(blobs)


def write_json(path: Path, value: object) -> None:
    path.write_text(json.dumps(value, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def main(out: Path = OUT) -> None:
    gen = torch.Generator().manual_seed(SEED)

    folder = out / "home" / "models" / "qwen3.5"
    folder.mkdir(parents=True, exist_ok=True)
    config = multimodal_config(tied=False)
    text = config["text_config"]
    assert isinstance(text, dict)
    sd = (
        text_weights(text, "model.language_model.", gen)
        | vision_weights(VISION, gen)
        | mtp_weights(text, gen)
    )
    write_json(folder / "config.json", config)
    (folder / "model.safetensors").write_bytes(safetensors_bytes(sd))

    folder = out / "sharded"
    folder.mkdir(parents=True, exist_ok=True)
    config = multimodal_config(tied=True)
    text = config["text_config"]
    assert isinstance(text, dict)
    sd = (
        text_weights(text, "model.language_model.", gen)
        | vision_weights(VISION, gen)
        | mtp_weights(text, gen)
    )
    # Every other name to the second shard, so that each layer has tensors in both.
    names = sorted(sd)
    shards = {f"model-0000{i + 1}-of-00002.safetensors": names[i::2] for i in range(2)}
    for file, part in shards.items():
        (folder / file).write_bytes(safetensors_bytes({n: sd[n] for n in part}))
    total = sum(t.numel() * t.element_size() for t in sd.values())
    index = {
        "metadata": {"total_parameters": sum(t.numel() for t in sd.values()), "total_size": total},
        "weight_map": {n: file for file, part in shards.items() for n in part},
    }
    write_json(folder / "config.json", config)
    write_json(folder / "model.safetensors.index.json", index)

    folder = out / "text-only"
    folder.mkdir(parents=True, exist_ok=True)
    write_json(folder / "config.json", TEXT_ONLY)
    (folder / "model.safetensors").write_bytes(safetensors_bytes(text_weights(TEXT_ONLY, "model.", gen)))


if __name__ == "__main__":
    main()
