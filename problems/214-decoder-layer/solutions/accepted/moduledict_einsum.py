"""Accepted: no helper classes for the sublayers. self_attn and mlp are nn.ModuleDicts of
Linears (the state_dict keys come out the same), the norms are a tiny module, attention is a
grouped einsum with a hand-written softmax, and the projections use F.linear."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Norm(nn.Module):
    def __init__(self, dim, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(dim))
        self.eps = eps

    def forward(self, x):
        xf = x.float()
        inv = (xf * xf).sum(-1, keepdim=True).div(x.shape[-1]).add(self.eps).rsqrt()
        return torch.einsum("...d,d->...d", xf * inv, self.weight.float() + 1).to(x.dtype)


def _linears(**shapes):
    return nn.ModuleDict({name: nn.Linear(i, o, bias=False) for name, (i, o) in shapes.items()})


class DecoderLayer(nn.Module):
    def __init__(self, dim, n_heads, n_kv_heads, head_dim, hidden, eps=1e-6):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = n_heads, n_kv_heads, head_dim
        self.input_layernorm = Norm(dim, eps)
        self.self_attn = _linears(
            q_proj=(dim, n_heads * head_dim),
            k_proj=(dim, n_kv_heads * head_dim),
            v_proj=(dim, n_kv_heads * head_dim),
            o_proj=(n_heads * head_dim, dim),
        )
        self.post_attention_layernorm = Norm(dim, eps)
        self.mlp = _linears(gate_proj=(dim, hidden), up_proj=(dim, hidden), down_proj=(hidden, dim))

    def _attention(self, x):
        p = {name: m.weight for name, m in self.self_attn.items()}
        b, s, _ = x.shape
        g = self.heads // self.kv_heads
        q = F.linear(x, p["q_proj"]).reshape(b, s, self.kv_heads, g, self.head_dim).float()
        k = F.linear(x, p["k_proj"]).reshape(b, s, self.kv_heads, self.head_dim).float()
        v = F.linear(x, p["v_proj"]).reshape(b, s, self.kv_heads, self.head_dim).float()
        scores = torch.einsum("bqkgd,bskd->bkgqs", q, k) / math.sqrt(self.head_dim)
        allowed = torch.ones(s, s, dtype=torch.bool).tril()
        scores = scores.masked_fill(~allowed, -math.inf)
        e = torch.exp(scores - scores.amax(-1, keepdim=True))
        w = e / e.sum(-1, keepdim=True)
        out = torch.einsum("bkgqs,bskd->bqkgd", w, v).reshape(b, s, -1).to(x.dtype)
        return F.linear(out, p["o_proj"])

    def _mlp(self, x):
        m = self.mlp
        return m["down_proj"](F.silu(m["gate_proj"](x)) * m["up_proj"](x))

    def forward(self, x):
        h = x + self._attention(self.input_layernorm(x))
        return h + self._mlp(self.post_attention_layernorm(h))
