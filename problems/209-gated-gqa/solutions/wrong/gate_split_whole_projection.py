"""查询和门是按头交错排列的：先把 q_proj 的输出 view 成 (batch, seq, n_heads, 2·head_dim)，再在最后一维切成两半。你在整个投影上对半切（前 n_heads·head_dim 个全当查询），于是第 0 个头的门被当成了第 1 个头的查询，依此类推。
Queries and gates are interleaved head by head: view q_proj's output as (batch, seq, n_heads, 2·head_dim) first, then split the last axis in half. You split the whole projection in two (the first n_heads·head_dim all as queries), so head 0's gate became head 1's query, and so on."""

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
        q, gate = self.q_proj(x).chunk(2, dim=-1)
        q = q.reshape(batch, seq, self.n_heads, hd)
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
        out = (out.float() * torch.sigmoid(gate.float())).to(x.dtype)
        return self.o_proj(out)
