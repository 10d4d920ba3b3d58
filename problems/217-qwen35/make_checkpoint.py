"""Write problem 217's tiny Qwen3.5 checkpoint: checkpoint/config.json and checkpoint/model.safetensors.

    .venv/bin/python problems/217-qwen35/make_checkpoint.py

The layout is Hugging Face's: config.json holds the keys transformers' Qwen3_5TextConfig writes,
model.safetensors the parameters of Qwen3_5ForCausalLM under their names ("model.layers.3.
self_attn.q_proj.weight", ...), in bf16 as Qwen ships them. The LM head is tied to the embedding,
so the file has no lm_head.weight. tests/problems/test_217_qwen35.py checks that this script
reproduces the committed files byte for byte and that transformers loads them.

Torch and the standard library only, and every number from one seeded generator, so the bytes
are the same on every machine. The weights are drawn so that no part of the model is idle:
- the zero-centred norms (input_layernorm, post_attention_layernorm, q_norm, k_norm, norm) get
  weights of N(0, 0.15²), so that `w` in place of `1 + w` is far off;
- the gated norm inside linear attention is not zero-centred: its weight is 1 + N(0, 0.15²);
- A_log = log(A), A ~ U(1, 16), as transformers initialises it, and dt_bias = softplus⁻¹(dt) with
  dt log-uniform in [1e-3, 0.1] (the Mamba-2 recipe): the decay exp(-A softplus(a + dt_bias)) then
  spans forgetting within a few tokens to remembering the whole prompt, so a lost recurrent state
  shows in the logits;
- a token's key resembles its query, as in a trained model: the key rows of in_proj_qkv, and the
  key channels of conv1d, correlate 0.9 with the query's. With independent draws the first token
  of a linear-attention layer, whose output is beta (k . q) v, often has q . k near 0 in some
  head, and its sign then flips with bf16 rounding: bf16 logits were up to 8.7 away from fp32
  ones (0.6 to 0.8 with the correlation), which no bf16 case could tell from a mistake;
- projections are N(0, 1/fan_in) and the embedding N(0, 0.5²): each layer adds about as much to
  the residual stream as the embedding holds, so the logits at the last position depend on the
  whole prompt (changing its first token moves them by as much as they are large) and greedy
  decoding does not fall into repeating the last token, as it does when the embedding dominates
  a tied head; the logits spread over a few units.
"""

from __future__ import annotations

import json
import math
import struct
import sys
from pathlib import Path

import torch

OUT = Path(__file__).resolve().parent / "checkpoint"
SEED = 217

CONFIG = {
    "architectures": ["Qwen3_5ForCausalLM"],
    "attention_bias": False,
    "attention_dropout": 0.0,
    "bos_token_id": None,
    "dtype": "bfloat16",
    "eos_token_id": None,
    "head_dim": 32,
    "hidden_act": "silu",
    "hidden_size": 64,
    "initializer_range": 0.02,
    "intermediate_size": 128,
    "layer_types": ["linear_attention"] * 3 + ["full_attention"] + ["linear_attention"] * 3 + ["full_attention"],
    "linear_conv_kernel_dim": 4,
    "linear_key_head_dim": 16,
    "linear_num_key_heads": 2,
    "linear_num_value_heads": 4,
    "linear_value_head_dim": 16,
    "max_position_embeddings": 256,
    "model_type": "qwen3_5_text",
    "num_attention_heads": 4,
    "num_hidden_layers": 8,
    "num_key_value_heads": 2,
    "pad_token_id": None,
    "rms_norm_eps": 1e-06,
    "rope_parameters": {"partial_rotary_factor": 0.25, "rope_theta": 10000000.0, "rope_type": "default"},
    "tie_word_embeddings": True,
    "transformers_version": "5.23.0",
    "use_cache": True,
    "vocab_size": 256,
}


def weights(config: dict, gen: torch.Generator) -> dict[str, torch.Tensor]:
    def normal(*shape: int, std: float, mean: float = 0.0) -> torch.Tensor:
        return torch.randn(shape, generator=gen) * std + mean

    def linear(n_out: int, n_in: int) -> torch.Tensor:
        return normal(n_out, n_in, std=1 / math.sqrt(n_in))

    def like_queries(w: torch.Tensor, key_dim: int) -> torch.Tensor:
        # The rows of q, k, v are stacked in that order; k's become 0.9 q + 0.44 (its own draw).
        q, k, rest = w[:key_dim], w[key_dim : 2 * key_dim], w[2 * key_dim :]
        return torch.cat([q, 0.9 * q + math.sqrt(1 - 0.9**2) * k, rest])

    d, inter = config["hidden_size"], config["intermediate_size"]
    heads, kv_heads, hd = config["num_attention_heads"], config["num_key_value_heads"], config["head_dim"]
    nk, nv = config["linear_num_key_heads"], config["linear_num_value_heads"]
    dk, dv = config["linear_key_head_dim"], config["linear_value_head_dim"]
    conv_dim, kernel = 2 * nk * dk + nv * dv, config["linear_conv_kernel_dim"]

    sd = {"model.embed_tokens.weight": normal(config["vocab_size"], d, std=0.5)}
    for i, kind in enumerate(config["layer_types"]):
        p = f"model.layers.{i}."
        sd[p + "input_layernorm.weight"] = normal(d, std=0.15)
        if kind == "linear_attention":
            a = p + "linear_attn."
            sd[a + "in_proj_qkv.weight"] = like_queries(linear(conv_dim, d), nk * dk)
            sd[a + "in_proj_z.weight"] = linear(nv * dv, d)
            sd[a + "in_proj_b.weight"] = linear(nv, d)
            sd[a + "in_proj_a.weight"] = linear(nv, d)
            sd[a + "conv1d.weight"] = like_queries(normal(conv_dim, 1, kernel, std=0.5), nk * dk)
            dt = torch.exp(torch.rand(nv, generator=gen) * (math.log(0.1) - math.log(1e-3)) + math.log(1e-3))
            sd[a + "dt_bias"] = dt + torch.log(-torch.expm1(-dt))  # softplus(dt_bias) = dt
            sd[a + "A_log"] = torch.log(torch.rand(nv, generator=gen) * 15.0 + 1.0)
            sd[a + "norm.weight"] = normal(dv, std=0.15, mean=1.0)
            sd[a + "out_proj.weight"] = linear(d, nv * dv)
        else:
            a = p + "self_attn."
            sd[a + "q_proj.weight"] = linear(2 * heads * hd, d)  # per head: the query, then its gate
            sd[a + "k_proj.weight"] = linear(kv_heads * hd, d)
            sd[a + "v_proj.weight"] = linear(kv_heads * hd, d)
            sd[a + "q_norm.weight"] = normal(hd, std=0.15)
            sd[a + "k_norm.weight"] = normal(hd, std=0.15)
            sd[a + "o_proj.weight"] = linear(d, heads * hd)
        sd[p + "post_attention_layernorm.weight"] = normal(d, std=0.15)
        sd[p + "mlp.gate_proj.weight"] = linear(inter, d)
        sd[p + "mlp.up_proj.weight"] = linear(inter, d)
        sd[p + "mlp.down_proj.weight"] = linear(d, inter)
    sd["model.norm.weight"] = normal(d, std=0.15)
    return {name: t.to(torch.bfloat16) for name, t in sd.items()}


def safetensors_bytes(tensors: dict[str, torch.Tensor]) -> bytes:
    """The safetensors layout: u64 little-endian header size, a JSON header, the raw bytes."""
    if sys.byteorder != "little":
        raise SystemExit("safetensors is little-endian; write the checkpoint on a little-endian machine")
    names = {torch.bfloat16: "BF16", torch.float32: "F32"}
    header: dict[str, object] = {"__metadata__": {"format": "pt"}}
    blobs, offset = [], 0
    for name in sorted(tensors):
        t = tensors[name].contiguous()
        data = bytes(t.reshape(-1).view(torch.uint8).tolist())  # the raw bytes, without numpy
        header[name] = {"dtype": names[t.dtype], "shape": list(t.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    head = json.dumps(header, separators=(",", ":")).encode("utf-8")
    head += b" " * (-len(head) % 8)
    return struct.pack("<Q", len(head)) + head + b"".join(blobs)


def main(out: Path = OUT) -> None:
    gen = torch.Generator().manual_seed(SEED)
    out.mkdir(exist_ok=True)
    (out / "config.json").write_text(json.dumps(CONFIG, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    (out / "model.safetensors").write_bytes(safetensors_bytes(weights(CONFIG, gen)))


if __name__ == "__main__":
    main()
