"""MLP 的输出也要加回残差：return h + mlp(post_attention_layernorm(h))。你直接返回了 mlp(...)，注意力那一半的结果和原输入 x 都从残差流里消失了，梯度也失去了直通的路径。
Add the MLP's output back to the residual too: return h + mlp(post_attention_layernorm(h)). You return mlp(...) alone, so the attention half and the input x drop out of the residual stream, and the gradient loses its direct path."""

import torch
import torch.nn as nn

from qwen.mlp import SwiGLU
from qwen.norm import RMSNorm
from qwen.sdpa import attention


class Attention(nn.Module):
    """Causal grouped-query attention; no RoPE and no output gate in this problem."""

    def __init__(self, dim: int, n_heads: int, n_kv_heads: int, head_dim: int) -> None:
        super().__init__()
        self.n_heads, self.n_kv_heads, self.head_dim = n_heads, n_kv_heads, head_dim
        self.q_proj = nn.Linear(dim, n_heads * head_dim, bias=False)
        self.k_proj = nn.Linear(dim, n_kv_heads * head_dim, bias=False)
        self.v_proj = nn.Linear(dim, n_kv_heads * head_dim, bias=False)
        self.o_proj = nn.Linear(n_heads * head_dim, dim, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, _ = x.shape
        # (batch, seq, heads * head_dim) -> (batch, heads, seq, head_dim)
        q = self.q_proj(x).view(b, s, self.n_heads, self.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(b, s, self.n_kv_heads, self.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(b, s, self.n_kv_heads, self.head_dim).transpose(1, 2)
        group = self.n_heads // self.n_kv_heads
        k = k.repeat_interleave(group, dim=1)  # query head h reads kv head h // group
        v = v.repeat_interleave(group, dim=1)
        # Scores, softmax and the weighted sum in fp32 (the part), back in the activation dtype.
        out = attention(q, k, v)
        return self.o_proj(out.transpose(1, 2).reshape(b, s, self.n_heads * self.head_dim))


class DecoderLayer(nn.Module):
    def __init__(
        self, dim: int, n_heads: int, n_kv_heads: int, head_dim: int, hidden: int, eps: float = 1e-6
    ) -> None:
        super().__init__()
        self.input_layernorm = RMSNorm(dim, eps)
        self.self_attn = Attention(dim, n_heads, n_kv_heads, head_dim)
        self.post_attention_layernorm = RMSNorm(dim, eps)
        self.mlp = SwiGLU(dim, hidden)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x + self.self_attn(self.input_layernorm(x))
        return self.mlp(self.post_attention_layernorm(h))
