"""No repeated kv heads: queries are grouped as (kv_head, group) and einsum broadcasts over the
group. The norms and RoPE are the parts (problems 204 and 205); the attention is written here."""

import torch
from torch import nn

from qwen.norm import RMSNorm
from qwen.rope import apply_rope


class GatedAttention(nn.Module):
    def __init__(self, dim, n_heads, n_kv_heads, head_dim, eps=1e-6):
        super().__init__()
        self.h, self.kvh, self.d = n_heads, n_kv_heads, head_dim
        self.q_proj = nn.Linear(dim, 2 * n_heads * head_dim, bias=False)
        self.k_proj = nn.Linear(dim, n_kv_heads * head_dim, bias=False)
        self.v_proj = nn.Linear(dim, n_kv_heads * head_dim, bias=False)
        self.o_proj = nn.Linear(n_heads * head_dim, dim, bias=False)
        self.q_norm = RMSNorm(head_dim, eps)
        self.k_norm = RMSNorm(head_dim, eps)

    def forward(self, x, cos, sin):
        b, t, _ = x.shape
        h, kvh, d = self.h, self.kvh, self.d
        g = h // kvh
        qg = self.q_proj(x).view(b, t, h, 2, d)
        q, gate = qg[..., 0, :], qg[..., 1, :]
        pos = torch.arange(t)
        q = apply_rope(self.q_norm(q), cos, sin, pos)  # (b, t, h, d)
        k = apply_rope(self.k_norm(self.k_proj(x).view(b, t, kvh, d)), cos, sin, pos)
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
