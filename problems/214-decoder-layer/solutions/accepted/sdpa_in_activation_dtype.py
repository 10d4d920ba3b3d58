"""Accepted: production style. Attention runs in the activation dtype through
F.scaled_dot_product_attention (is_causal=True is right here: queries and keys cover the same
positions) with enable_gqa; the norm uses division by sqrt instead of rsqrt."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class ZeroCentredRMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(dim))
        self.eps = eps

    def forward(self, x):
        xf = x.to(torch.float32)
        rms = torch.sqrt(xf.square().mean(-1, keepdim=True) + self.eps)
        return (xf / rms * (self.weight.to(torch.float32) + 1.0)).type_as(x)


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


class SwiGLU(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.gate_proj = nn.Linear(dim, hidden, bias=False)
        self.up_proj = nn.Linear(dim, hidden, bias=False)
        self.down_proj = nn.Linear(hidden, dim, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class DecoderLayer(nn.Module):
    def __init__(self, dim, n_heads, n_kv_heads, head_dim, hidden, eps=1e-6):
        super().__init__()
        self.input_layernorm = ZeroCentredRMSNorm(dim, eps)
        self.self_attn = SelfAttention(dim, n_heads, n_kv_heads, head_dim)
        self.post_attention_layernorm = ZeroCentredRMSNorm(dim, eps)
        self.mlp = SwiGLU(dim, hidden)

    def forward(self, x):
        residual = x
        x = residual + self.self_attn(self.input_layernorm(x))
        residual = x
        return residual + self.mlp(self.post_attention_layernorm(x))
