"""In the style of Meta's Llama reference code and gpt-fast: a `ModelArgs` read from the config,
`precompute_freqs_cis` (complex rotations, made once from the config at construction) and
`apply_rotary_emb` by complex multiplication, a static KV cache preallocated to max_len that is
written at `start_pos` and read up to `start_pos + seqlen`, and attention as an explicit
`matmul`, an additive mask and a softmax in fp32. The cache object holds everything a sequence
carries (its length, the KV buffers, the linear-attention states), so one model can decode
several sequences in turn. The linear-attention mixer, the MLP, the embedding and the loader
are the parts."""

import json
import math
import struct
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F

from qwen.checkpoint import load_checkpoint
from qwen.embedding import TiedEmbedding
from qwen.linear_attention import GatedDeltaNet
from qwen.mlp import SwiGLU

SAFETENSORS_DTYPES = {"BF16": torch.bfloat16, "F16": torch.float16, "F32": torch.float32}


def read_safetensors(path):
    raw = Path(path).read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + n])
    header.pop("__metadata__", None)
    body = raw[8 + n :]
    out = {}
    for name, info in header.items():
        start, end = info["data_offsets"]
        flat = torch.frombuffer(bytearray(body[start:end]), dtype=SAFETENSORS_DTYPES[info["dtype"]])
        out[name] = flat.reshape(info["shape"])
    return out


@dataclass
class ModelArgs:
    dim: int
    n_layers: int
    layer_types: list
    n_heads: int
    n_kv_heads: int
    head_dim: int
    vocab_size: int
    hidden_dim: int
    norm_eps: float
    rope_theta: float
    rotary_dim: int
    max_seq_len: int
    linear: tuple  # key heads, value heads, key head dim, value head dim, conv width

    @classmethod
    def from_config(cls, c):
        rope = c["rope_parameters"]
        return cls(
            dim=c["hidden_size"],
            n_layers=c["num_hidden_layers"],
            layer_types=list(c["layer_types"]),
            n_heads=c["num_attention_heads"],
            n_kv_heads=c["num_key_value_heads"],
            head_dim=c["head_dim"],
            vocab_size=c["vocab_size"],
            hidden_dim=c["intermediate_size"],
            norm_eps=c["rms_norm_eps"],
            rope_theta=rope["rope_theta"],
            rotary_dim=int(c["head_dim"] * rope["partial_rotary_factor"]),
            max_seq_len=c["max_position_embeddings"],
            linear=(
                c["linear_num_key_heads"],
                c["linear_num_value_heads"],
                c["linear_key_head_dim"],
                c["linear_value_head_dim"],
                c["linear_conv_kernel_dim"],
            ),
        )


class RMSNorm(nn.Module):
    """Zero-centred: scales by 1 + weight, statistics in fp32."""

    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.zeros(dim))

    def _norm(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)

    def forward(self, x):
        return (self._norm(x.float()) * (1.0 + self.weight.float())).type_as(x)


def precompute_freqs_cis(dim, end, theta):
    freqs = 1.0 / (theta ** (torch.arange(0, dim, 2).float() / dim))
    freqs = torch.outer(torch.arange(end, dtype=torch.float32), freqs)
    return torch.polar(torch.ones_like(freqs), freqs)  # complex64, (end, dim / 2)


def apply_rotary_emb(x, freqs_cis):
    """x: (bsz, seqlen, heads, head_dim); the first 2 * freqs_cis.shape[-1] features turn. Qwen
    pairs feature i with feature i + rot/2 (the halves), so the halves are the real and the
    imaginary parts."""
    rot = 2 * freqs_cis.shape[-1]
    x_rot, x_pass = x[..., :rot].float(), x[..., rot:]
    x_c = torch.complex(x_rot[..., : rot // 2].contiguous(), x_rot[..., rot // 2 :].contiguous())
    x_c = x_c * freqs_cis[None, :, None, :]
    out = torch.cat([x_c.real, x_c.imag, x_pass.float()], dim=-1)
    return out.type_as(x)


def repeat_kv(x, n_rep):
    """(bsz, seqlen, n_kv_heads, head_dim) -> (bsz, seqlen, n_kv_heads * n_rep, head_dim)."""
    bs, slen, n_kv_heads, head_dim = x.shape
    if n_rep == 1:
        return x
    return (
        x[:, :, :, None, :]
        .expand(bs, slen, n_kv_heads, n_rep, head_dim)
        .reshape(bs, slen, n_kv_heads * n_rep, head_dim)
    )


class StaticKV:
    def __init__(self, bsz, max_len, n_kv_heads, head_dim, dtype):
        self.cache_k = torch.zeros(bsz, max_len, n_kv_heads, head_dim, dtype=dtype)
        self.cache_v = torch.zeros(bsz, max_len, n_kv_heads, head_dim, dtype=dtype)


class Attention(nn.Module):
    def __init__(self, args):
        super().__init__()
        self.n_heads, self.n_kv_heads, self.head_dim = args.n_heads, args.n_kv_heads, args.head_dim
        self.n_rep = args.n_heads // args.n_kv_heads
        self.q_proj = nn.Linear(args.dim, args.n_heads * args.head_dim * 2, bias=False)
        self.k_proj = nn.Linear(args.dim, args.n_kv_heads * args.head_dim, bias=False)
        self.v_proj = nn.Linear(args.dim, args.n_kv_heads * args.head_dim, bias=False)
        self.o_proj = nn.Linear(args.n_heads * args.head_dim, args.dim, bias=False)
        self.q_norm = RMSNorm(args.head_dim, args.norm_eps)
        self.k_norm = RMSNorm(args.head_dim, args.norm_eps)

    def forward(self, x, start_pos, freqs_cis, mask, kv):
        bsz, seqlen, _ = x.shape
        xq, gate = self.q_proj(x).view(bsz, seqlen, self.n_heads, 2 * self.head_dim).chunk(2, dim=-1)
        xk = self.k_proj(x).view(bsz, seqlen, self.n_kv_heads, self.head_dim)
        xv = self.v_proj(x).view(bsz, seqlen, self.n_kv_heads, self.head_dim)
        xq = apply_rotary_emb(self.q_norm(xq), freqs_cis)
        xk = apply_rotary_emb(self.k_norm(xk), freqs_cis)

        kv.cache_k[:bsz, start_pos : start_pos + seqlen] = xk
        kv.cache_v[:bsz, start_pos : start_pos + seqlen] = xv
        keys = repeat_kv(kv.cache_k[:bsz, : start_pos + seqlen], self.n_rep)
        values = repeat_kv(kv.cache_v[:bsz, : start_pos + seqlen], self.n_rep)

        xq, keys, values = xq.transpose(1, 2), keys.transpose(1, 2), values.transpose(1, 2)
        scores = torch.matmul(xq, keys.transpose(2, 3)) / math.sqrt(self.head_dim)
        if mask is not None:
            scores = scores + mask  # (seqlen, cache_len + seqlen)
        scores = F.softmax(scores.float(), dim=-1).type_as(xq)
        output = torch.matmul(scores, values).transpose(1, 2).reshape(bsz, seqlen, -1)
        return self.o_proj(output * torch.sigmoid(gate.reshape(bsz, seqlen, -1)))


class TransformerBlock(nn.Module):
    def __init__(self, args, kind):
        super().__init__()
        self.kind = kind
        self.input_layernorm = RMSNorm(args.dim, args.norm_eps)
        if kind == "linear_attention":
            hk, hv, dk, dv, width = args.linear
            self.linear_attn = GatedDeltaNet(args.dim, hk, hv, dk, dv, width, args.norm_eps)
        elif kind == "full_attention":
            self.self_attn = Attention(args)
        else:
            raise ValueError(f"unknown layer type {kind!r}")
        self.post_attention_layernorm = RMSNorm(args.dim, args.norm_eps)
        self.mlp = SwiGLU(args.dim, args.hidden_dim)

    def forward(self, x, start_pos, freqs_cis, mask, cache, i):
        h = self.input_layernorm(x)
        if self.kind == "full_attention":
            h = self.self_attn(h, start_pos, freqs_cis, mask, cache.layers[i])
        else:
            h, cache.layers[i] = self.linear_attn(h, cache.layers[i])
        h = x + h
        return h + self.mlp(self.post_attention_layernorm(h))


class Cache:
    """One sequence's decoding state: its length and, per layer, a static KV buffer or the conv
    and recurrent states."""

    def __init__(self, model, bsz, max_len):
        dtype = model.embed_tokens.weight.dtype
        self.start_pos = 0
        self.layers = [
            StaticKV(bsz, max_len, model.args.n_kv_heads, model.args.head_dim, dtype)
            if layer.kind == "full_attention"
            else layer.linear_attn.zero_state(bsz)
            for layer in model.layers
        ]


class Transformer(nn.Module):
    def __init__(self, args):
        super().__init__()
        self.args = args
        self.embed_tokens = TiedEmbedding(args.vocab_size, args.dim)
        self.layers = nn.ModuleList(TransformerBlock(args, kind) for kind in args.layer_types)
        self.norm = RMSNorm(args.dim, args.norm_eps)
        # From the config alone, once; a plain attribute, so model.to() leaves it complex64.
        self.freqs_cis = precompute_freqs_cis(args.rotary_dim, args.max_seq_len, args.rope_theta)

    def new_cache(self, batch, max_len):
        return Cache(self, batch, max_len)

    def forward(self, input_ids, cache=None, hidden_states=False):
        bsz, seqlen = input_ids.shape
        if cache is None:  # a whole sequence: a cache of its own, just long enough
            cache = self.new_cache(bsz, seqlen)
        start_pos = cache.start_pos
        h = self.embed_tokens.embed(input_ids)
        freqs_cis = self.freqs_cis[start_pos : start_pos + seqlen]
        mask = None
        if seqlen > 1:
            mask = torch.full((seqlen, seqlen), float("-inf")).triu(1)
            # Every cached position is visible: only the new tokens need the causal mask.
            mask = torch.hstack([torch.zeros(seqlen, start_pos), mask]).type_as(h)
        hidden = [h]
        for i, layer in enumerate(self.layers):
            h = layer(h, start_pos, freqs_cis, mask, cache, i)
            hidden.append(h)
        h = self.norm(h)
        hidden[-1] = h
        cache.start_pos = start_pos + seqlen
        logits = self.embed_tokens.logits(h)
        return (logits, tuple(hidden)) if hidden_states else logits

    @torch.inference_mode()
    def generate(self, input_ids, max_new_tokens):
        bsz, prompt_len = input_ids.shape
        cache = self.new_cache(bsz, prompt_len + max_new_tokens)
        tokens = torch.empty(bsz, prompt_len + max_new_tokens, dtype=torch.long)
        tokens[:, :prompt_len] = input_ids
        cur = input_ids
        for pos in range(prompt_len, prompt_len + max_new_tokens):
            next_token = torch.argmax(self(cur, cache=cache)[:, -1], dim=-1)
            tokens[:, pos] = next_token
            cur = tokens[:, pos : pos + 1]
        return tokens


def load_model(checkpoint_dir):
    folder = Path(checkpoint_dir)
    args = ModelArgs.from_config(json.loads((folder / "config.json").read_text(encoding="utf-8")))
    model = Transformer(args)
    load_checkpoint(model, read_safetensors(folder / "model.safetensors"))
    return model
