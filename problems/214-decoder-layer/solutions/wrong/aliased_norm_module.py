"""self.post_attention_layernorm = self.input_layernorm 让两个名字指向同一个模块：两个子层共用一组归一化权重，named_parameters 里只列出一次，检查点里两组不同的权重也装不进去（后加载的会覆盖先加载的）。要创建两个独立的 RMSNorm 实例。
self.post_attention_layernorm = self.input_layernorm makes both names point at one module: the two sublayers share one norm weight, named_parameters lists it once, and a checkpoint's two different norm weights cannot both load (the second overwrites the first). Create two separate RMSNorm instances."""

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
        self.post_attention_layernorm = self.input_layernorm  # the same norm twice
        self.mlp = SwiGLU(dim, hidden)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x + self.self_attn(self.input_layernorm(x))
        return h + self.mlp(self.post_attention_layernorm(h))
