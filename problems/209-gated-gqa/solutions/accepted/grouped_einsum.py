"""No repeated kv heads: queries are grouped as (kv_head, group) and einsum broadcasts over the group."""

import torch
from torch import nn


class ZeroCentredRMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(dim))
        self.eps = eps

    def forward(self, x):
        xf = x.float()
        rms = torch.sqrt((xf * xf).sum(-1, keepdim=True) / x.shape[-1] + self.eps)
        return (xf / rms * (self.weight.float() + 1)).type_as(x)


def rope(x, cos, sin):
    r = cos.shape[-1]
    xf = x.float()
    x1, x2, rest = xf[..., : r // 2], xf[..., r // 2 : r], xf[..., r:]
    c1, c2 = cos[..., : r // 2], cos[..., r // 2 :]
    s1, s2 = sin[..., : r // 2], sin[..., r // 2 :]
    return torch.cat([x1 * c1 - x2 * s1, x2 * c2 + x1 * s2, rest], dim=-1).type_as(x)


class GatedAttention(nn.Module):
    def __init__(self, dim, n_heads, n_kv_heads, head_dim, eps=1e-6):
        super().__init__()
        self.h, self.kvh, self.d = n_heads, n_kv_heads, head_dim
        self.q_proj = nn.Linear(dim, 2 * n_heads * head_dim, bias=False)
        self.k_proj = nn.Linear(dim, n_kv_heads * head_dim, bias=False)
        self.v_proj = nn.Linear(dim, n_kv_heads * head_dim, bias=False)
        self.o_proj = nn.Linear(n_heads * head_dim, dim, bias=False)
        self.q_norm = ZeroCentredRMSNorm(head_dim, eps)
        self.k_norm = ZeroCentredRMSNorm(head_dim, eps)

    def forward(self, x, cos, sin):
        b, t, _ = x.shape
        h, kvh, d = self.h, self.kvh, self.d
        g = h // kvh
        qg = self.q_proj(x).view(b, t, h, 2, d)
        q, gate = qg[..., 0, :], qg[..., 1, :]
        q = rope(self.q_norm(q), cos[:, None], sin[:, None])  # (b, t, h, d)
        k = rope(self.k_norm(self.k_proj(x).view(b, t, kvh, d)), cos[:, None], sin[:, None])
        v = self.v_proj(x).view(b, t, kvh, d)

        # Query head h = kv * g + j belongs to kv head `kv`: the same as repeat_interleave.
        qf = q.float().view(b, t, kvh, g, d)
        scores = torch.einsum("bqkgd,bskd->bkgqs", qf, k.float()) * d**-0.5
        future = torch.ones(t, t, dtype=torch.bool).triu(1)
        scores = scores.masked_fill(future, float("-inf"))
        scores = scores - scores.amax(-1, keepdim=True)
        w = scores.exp()
        w = w / w.sum(-1, keepdim=True)
        out = torch.einsum("bkgqs,bskd->bqkgd", w, v.float()).reshape(b, t, h * d).to(x.dtype)

        gated = (out.float() * gate.reshape(b, t, h * d).float().sigmoid()).to(x.dtype)
        return self.o_proj(gated)
