"""Accepted: the norms and the MLP are the parts (problems 204 and 206); the attention is
torch's F.scaled_dot_product_attention with enable_gqa, in the activation dtype, instead of
problem 208's part (allowed here: the exercise is the wiring)."""

import torch.nn as nn
import torch.nn.functional as F

from qwen.mlp import SwiGLU
from qwen.norm import RMSNorm


class SelfAttention(nn.Module):
    def __init__(self, dim, n_heads, n_kv_heads, head_dim):
        super().__init__()
        self.h, self.kv, self.d = n_heads, n_kv_heads, head_dim
        self.q_proj = nn.Linear(dim, n_heads * head_dim, bias=False)
        self.k_proj = nn.Linear(dim, n_kv_heads * head_dim, bias=False)
        self.v_proj = nn.Linear(dim, n_kv_heads * head_dim, bias=False)
        self.o_proj = nn.Linear(n_heads * head_dim, dim, bias=False)

    def forward(self, x):
        q = self.q_proj(x).unflatten(-1, (self.h, self.d)).transpose(1, 2)
        k = self.k_proj(x).unflatten(-1, (self.kv, self.d)).transpose(1, 2)
        v = self.v_proj(x).unflatten(-1, (self.kv, self.d)).transpose(1, 2)
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        return self.o_proj(out.transpose(1, 2).flatten(2))


class DecoderLayer(nn.Module):
    def __init__(self, dim, n_heads, n_kv_heads, head_dim, hidden, eps=1e-6):
        super().__init__()
        self.input_layernorm = RMSNorm(dim, eps)
        self.self_attn = SelfAttention(dim, n_heads, n_kv_heads, head_dim)
        self.post_attention_layernorm = RMSNorm(dim, eps)
        self.mlp = SwiGLU(dim, hidden)

    def forward(self, x):
        h = x + self.self_attn(self.input_layernorm(x))
        return h + self.mlp(self.post_attention_layernorm(h))
