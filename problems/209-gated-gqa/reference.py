"""Reference for problem 209: Qwen3.5's full-attention layer (GQA, per-head QK-norm, output gate)."""

import math

import torch
import torch.nn as nn


class RMSNorm(nn.Module):
    """Zero-centred RMSNorm over the last axis, as in problem 204."""

    def __init__(self, dim: int, eps: float = 1e-6) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(dim))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        xf = x.float()
        y = xf * torch.rsqrt(xf.pow(2).mean(dim=-1, keepdim=True) + self.eps)
        return (y * (1.0 + self.weight.float())).to(x.dtype)


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat([-x2, x1], dim=-1)


def apply_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    # x: (batch, heads, seq, head_dim); cos, sin: (seq, rotary_dim). Only the first rotary_dim
    # features of each head rotate (pairs i and i + rotary_dim/2); the rest pass through.
    rot = cos.shape[-1]
    xf = x.float()
    x_rot, x_pass = xf[..., :rot], xf[..., rot:]
    c, s = cos.float(), sin.float()  # (seq, rot) broadcasts over batch and heads
    return torch.cat([x_rot * c + rotate_half(x_rot) * s, x_pass], dim=-1).to(x.dtype)


def causal_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    # q, k, v: (batch, heads, seq, head_dim), fp32 inside, as in problem 208 (no padding here).
    seq = q.shape[-2]
    scores = (q.float() @ k.float().transpose(-2, -1)) / math.sqrt(q.shape[-1])
    future = torch.ones(seq, seq, dtype=torch.bool, device=q.device).triu(1)
    weights = torch.softmax(scores.masked_fill(future, float("-inf")), dim=-1)
    return (weights @ v.float()).to(q.dtype)


class GatedAttention(nn.Module):
    def __init__(self, dim: int, n_heads: int, n_kv_heads: int, head_dim: int, eps: float = 1e-6) -> None:
        super().__init__()
        if n_heads % n_kv_heads:
            raise ValueError("n_heads must be a multiple of n_kv_heads")
        self.n_heads, self.n_kv_heads, self.head_dim = n_heads, n_kv_heads, head_dim
        # Per head, 2 * head_dim outputs: the query, then that head's gate.
        self.q_proj = nn.Linear(dim, n_heads * head_dim * 2, bias=False)
        self.k_proj = nn.Linear(dim, n_kv_heads * head_dim, bias=False)
        self.v_proj = nn.Linear(dim, n_kv_heads * head_dim, bias=False)
        self.o_proj = nn.Linear(n_heads * head_dim, dim, bias=False)
        self.q_norm = RMSNorm(head_dim, eps)
        self.k_norm = RMSNorm(head_dim, eps)

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        batch, seq, _ = x.shape
        hd = self.head_dim
        q, gate = self.q_proj(x).view(batch, seq, self.n_heads, 2 * hd).split(hd, dim=-1)
        k = self.k_proj(x).view(batch, seq, self.n_kv_heads, hd)
        v = self.v_proj(x).view(batch, seq, self.n_kv_heads, hd)

        # Per-head norms first (over head_dim), then RoPE; heads move in front of seq.
        q = self.q_norm(q).transpose(1, 2)
        k = self.k_norm(k).transpose(1, 2)
        v = v.transpose(1, 2)
        q = apply_rope(q, cos, sin)
        k = apply_rope(k, cos, sin)

        # Query head h reads kv head h // group: consecutive query heads share a kv head.
        group = self.n_heads // self.n_kv_heads
        k = k.repeat_interleave(group, dim=1)
        v = v.repeat_interleave(group, dim=1)
        out = causal_attention(q, k, v)  # (batch, n_heads, seq, head_dim)

        out = out.transpose(1, 2).reshape(batch, seq, self.n_heads * hd)
        gate = gate.reshape(batch, seq, self.n_heads * hd)
        # The gate is applied in fp32 and rounded once, before the output projection.
        out = (out.float() * torch.sigmoid(gate.float())).to(x.dtype)
        return self.o_proj(out)
