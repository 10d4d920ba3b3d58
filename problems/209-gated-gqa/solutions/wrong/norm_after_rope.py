"""顺序是先做 q_norm / k_norm，再做 RoPE。旋转不改变均方根，但 (1 + weight) 给每个特征各自的比例，而旋转会把一对特征混在一起：先旋转再缩放，每个特征乘到的是为另一个特征学的比例，结果就不一样了。
Apply q_norm / k_norm first, then RoPE. A rotation keeps the root mean square, but (1 + weight) gives each feature its own scale and a rotation mixes the two features of a pair: rotate first and each feature gets a scale learned for another one, which gives another result."""

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
        q = self.q_norm(apply_rope(q, cos, sin, positions)).transpose(1, 2)
        k = self.k_norm(apply_rope(k, cos, sin, positions)).transpose(1, 2)
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
