"""Accepted: every sublayer computed in float64 from the given weights, each sublayer's output
rounded back to the activation dtype before the residual add."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(dim))
        self.eps = eps

    def forward(self, x):
        xd = x.double()
        y = xd / torch.sqrt(xd.pow(2).mean(-1, keepdim=True) + self.eps) * (1 + self.weight.double())
        return y.to(x.dtype)


class Attention(nn.Module):
    def __init__(self, dim, n_heads, n_kv_heads, head_dim):
        super().__init__()
        self.n_heads, self.n_kv_heads, self.head_dim = n_heads, n_kv_heads, head_dim
        self.q_proj = nn.Linear(dim, n_heads * head_dim, bias=False)
        self.k_proj = nn.Linear(dim, n_kv_heads * head_dim, bias=False)
        self.v_proj = nn.Linear(dim, n_kv_heads * head_dim, bias=False)
        self.o_proj = nn.Linear(n_heads * head_dim, dim, bias=False)

    def forward(self, x):
        b, s, _ = x.shape
        xd = x.double()
        q = F.linear(xd, self.q_proj.weight.double()).view(b, s, self.n_heads, self.head_dim).transpose(1, 2)
        k = (
            F.linear(xd, self.k_proj.weight.double())
            .view(b, s, self.n_kv_heads, self.head_dim)
            .transpose(1, 2)
        )
        v = (
            F.linear(xd, self.v_proj.weight.double())
            .view(b, s, self.n_kv_heads, self.head_dim)
            .transpose(1, 2)
        )
        g = self.n_heads // self.n_kv_heads
        k, v = k.repeat_interleave(g, 1), v.repeat_interleave(g, 1)
        scores = q @ k.transpose(-1, -2) / math.sqrt(self.head_dim)
        scores = scores.masked_fill(torch.ones(s, s, dtype=torch.bool).triu(1), -math.inf)
        out = (scores.softmax(-1) @ v).transpose(1, 2).reshape(b, s, -1)
        return F.linear(out, self.o_proj.weight.double()).to(x.dtype)


class MLP(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.gate_proj = nn.Linear(dim, hidden, bias=False)
        self.up_proj = nn.Linear(dim, hidden, bias=False)
        self.down_proj = nn.Linear(hidden, dim, bias=False)

    def forward(self, x):
        xd = x.double()
        a = F.silu(F.linear(xd, self.gate_proj.weight.double())) * F.linear(xd, self.up_proj.weight.double())
        return F.linear(a, self.down_proj.weight.double()).to(x.dtype)


class DecoderLayer(nn.Module):
    def __init__(self, dim, n_heads, n_kv_heads, head_dim, hidden, eps=1e-6):
        super().__init__()
        self.input_layernorm = RMSNorm(dim, eps)
        self.self_attn = Attention(dim, n_heads, n_kv_heads, head_dim)
        self.post_attention_layernorm = RMSNorm(dim, eps)
        self.mlp = MLP(dim, hidden)

    def forward(self, x):
        h = x + self.self_attn(self.input_layernorm(x))
        return h + self.mlp(self.post_attention_layernorm(h))
