"""输出门是 sigmoid(gate)，取值在 0 到 1 之间，决定每个特征放行多少。你用了 silu(gate) = gate·sigmoid(gate)：它可以是负数，也可以远大于 1，就不再是门了。
The output gate is sigmoid(gate), between 0 and 1: how much of each feature passes. You used silu(gate) = gate·sigmoid(gate), which can be negative or far above 1, so it no longer acts as a gate."""

import torch
import torch.nn as nn

from qwen.norm import RMSNorm
from qwen.rope import apply_rope
from qwen.sdpa import attention


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

        # Per-head norms first (over head_dim), then RoPE, both on (batch, seq, heads, head_dim).
        # The tables hold positions 0..seq-1, so position t reads row t.
        positions = torch.arange(seq, device=x.device)
        q = apply_rope(self.q_norm(q), cos, sin, positions).transpose(1, 2)
        k = apply_rope(self.k_norm(k), cos, sin, positions).transpose(1, 2)
        v = v.transpose(1, 2)

        # Query head h reads kv head h // group: consecutive query heads share a kv head.
        group = self.n_heads // self.n_kv_heads
        k = k.repeat_interleave(group, dim=1)
        v = v.repeat_interleave(group, dim=1)
        out = attention(q, k, v)  # (batch, n_heads, seq, head_dim), causal, no padding here

        out = out.transpose(1, 2).reshape(batch, seq, self.n_heads * hd)
        gate = gate.reshape(batch, seq, self.n_heads * hd)
        # The gate is applied in fp32 and rounded once, before the output projection.
        out = (out.float() * torch.nn.functional.silu(gate.float())).to(x.dtype)
        return self.o_proj(out)
