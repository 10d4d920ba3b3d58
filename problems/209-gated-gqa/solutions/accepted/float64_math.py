"""Every step in float64 from the (possibly bf16) weights and input; one rounding at the very end.

The norms, called on their own, also compute in float64 and round once to their input's dtype.
"""

import math

import torch
from torch import nn


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(dim))
        self.eps = eps

    def forward(self, x):
        # float64 inside, the input's dtype out: inside the layer x is float64 already, so the
        # one rounding of the layer stays at the very end.
        xd = x.double()
        y = xd * torch.rsqrt(xd.pow(2).mean(-1, keepdim=True) + self.eps) * (1 + self.weight.double())
        return y.to(x.dtype)


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
        xd = x.double()
        qg = (xd @ self.q_proj.weight.double().T).view(b, t, h, 2 * d)
        q, gate = qg[..., :d], qg[..., d:].reshape(b, t, h * d)
        k = (xd @ self.k_proj.weight.double().T).view(b, t, kvh, d)
        v = (xd @ self.v_proj.weight.double().T).view(b, t, kvh, d)
        q, k = self.q_norm(q), self.k_norm(k)

        r = cos.shape[-1]
        c, s = cos.double()[:, None, :], sin.double()[:, None, :]

        def rot(z):
            z1, z2 = z[..., : r // 2], z[..., r // 2 : r]
            return torch.cat([z[..., :r] * c + torch.cat([-z2, z1], -1) * s, z[..., r:]], -1)

        q, k = rot(q), rot(k)
        kv_of = torch.arange(h) // (h // kvh)  # the kv head each query head reads
        k, v = k[:, :, kv_of], v[:, :, kv_of]  # (b, t, h, d)
        scores = torch.einsum("bqhd,bkhd->bhqk", q, k) / math.sqrt(d)
        scores = scores.masked_fill(torch.ones(t, t, dtype=torch.bool).triu(1), float("-inf"))
        w = torch.softmax(scores, dim=-1)
        out = torch.einsum("bhqk,bkhd->bqhd", w, v).reshape(b, t, h * d)
        out = out * torch.sigmoid(gate)
        return (out @ self.o_proj.weight.double().T).to(x.dtype)
