"""kv 头要用 repeat_interleave 展开：相邻的 group 个查询头共用一个 kv 头，查询头 h 读 kv 头 h // group。你用了 .repeat（整体平铺），查询头 h 读到的是 kv 头 h % n_kv_heads，与按前一种方式训练出的权重对不上。n_kv_heads 为 1 或等于 n_heads 时两者相同，所以只在真正分组时出错。
Expand the kv heads with repeat_interleave: each run of `group` consecutive query heads shares one kv head, so query head h reads kv head h // group. You used .repeat (tiling), so query head h reads kv head h % n_kv_heads, which does not match weights trained the other way. With n_kv_heads equal to 1 or to n_heads the two agree, so it only goes wrong with real groups."""

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
        k = k.repeat(1, group, 1, 1)
        v = v.repeat(1, group, 1, 1)
        out = attention(q, k, v)  # (batch, n_heads, seq, head_dim), causal, no padding here

        out = out.transpose(1, 2).reshape(batch, seq, self.n_heads * hd)
        gate = gate.reshape(batch, seq, self.n_heads * hd)
        # The gate is applied in fp32 and rounded once, before the output projection.
        out = (out.float() * torch.sigmoid(gate.float())).to(x.dtype)
        return self.o_proj(out)
