"""部分旋转时只有每个头的前 r = cos.shape[-1] 个特征参与旋转，配对是 (i, i + r/2)，其余特征原样保留。你把表补齐到 head_dim 后在整个头上做 rotate_half，配对成了 (i, i + head_dim/2)，旋转的是另一组特征。
With partial rotary only the first r = cos.shape[-1] features of each head rotate, in pairs (i, i + r/2), and the rest pass through unchanged. You padded the table to head_dim and applied rotate_half over the whole head, which pairs (i, i + head_dim/2) and rotates other features."""

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
    # Pad the narrow table to the full head: cos 1 and sin 0 leave the extra features alone.
    d, r = x.shape[-1], cos.shape[-1]
    cos = torch.cat([cos, torch.ones(cos.shape[0], d - r)], dim=-1)
    sin = torch.cat([sin, torch.zeros(sin.shape[0], d - r)], dim=-1)
    xf = x.float()
    return (xf * cos + rotate_half(xf) * sin).to(x.dtype)


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
        q, gate = self.q_proj(x).view(b, t, h, 2 * d).split(d, dim=-1)
        gate = gate.reshape(b, t, h * d)
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
