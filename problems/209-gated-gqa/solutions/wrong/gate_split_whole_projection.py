"""查询和门是按头交错排列的：先把 q_proj 的输出 view 成 (batch, seq, n_heads, 2·head_dim)，再在最后一维切成两半。你在整个投影上对半切（前 n_heads·head_dim 个全当查询），于是第 0 个头的门被当成了第 1 个头的查询，依此类推。
Queries and gates are interleaved head by head: view q_proj's output as (batch, seq, n_heads, 2·head_dim) first, then split the last axis in half. You split the whole projection in two (the first n_heads·head_dim all as queries), so head 0's gate became head 1's query, and so on."""

import math

import torch
from torch import nn


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(dim))
        self.eps = eps

    def forward(self, x):
        xf = x.float()
        y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)
        return (y * (1.0 + self.weight.float())).to(x.dtype)


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat([-x2, x1], dim=-1)


def apply_rope(x, cos, sin):
    r = cos.shape[-1]
    xf = x.float()
    x_rot, x_pass = xf[..., :r], xf[..., r:]
    return torch.cat([x_rot * cos + rotate_half(x_rot) * sin, x_pass], dim=-1).to(x.dtype)


class GatedAttention(nn.Module):
    def __init__(self, dim, n_heads, n_kv_heads, head_dim, eps=1e-6):
        super().__init__()
        self.n_heads, self.n_kv_heads, self.head_dim = n_heads, n_kv_heads, head_dim
        self.q_proj = nn.Linear(dim, n_heads * head_dim * 2, bias=False)
        self.k_proj = nn.Linear(dim, n_kv_heads * head_dim, bias=False)
        self.v_proj = nn.Linear(dim, n_kv_heads * head_dim, bias=False)
        self.o_proj = nn.Linear(n_heads * head_dim, dim, bias=False)
        self.q_norm = RMSNorm(head_dim, eps)
        self.k_norm = RMSNorm(head_dim, eps)

    def forward(self, x, cos, sin):
        b, t, _ = x.shape
        h, kvh, d = self.n_heads, self.n_kv_heads, self.head_dim
        q, gate = self.q_proj(x).chunk(2, dim=-1)
        q = q.reshape(b, t, h, d)
        k = self.k_proj(x).view(b, t, kvh, d)
        v = self.v_proj(x).view(b, t, kvh, d).transpose(1, 2)
        q = apply_rope(self.q_norm(q).transpose(1, 2), cos, sin)
        k = apply_rope(self.k_norm(k).transpose(1, 2), cos, sin)

        group = h // kvh
        k = k.repeat_interleave(group, dim=1)
        v = v.repeat_interleave(group, dim=1)
        scores = (q.float() @ k.float().transpose(-2, -1)) / math.sqrt(d)
        future = torch.ones(t, t, dtype=torch.bool).triu(1)
        scores = scores.masked_fill(future, float("-inf"))
        out = (torch.softmax(scores, dim=-1) @ v.float()).to(x.dtype)
        out = out.transpose(1, 2).reshape(b, t, h * d)
        out = (out.float() * torch.sigmoid(gate.float())).to(x.dtype)
        return self.o_proj(out)
