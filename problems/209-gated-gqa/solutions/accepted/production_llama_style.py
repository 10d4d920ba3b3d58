"""The layer in the style of Meta's Llama `model.py`: xq/xk/xv, a `repeat_kv` helper, an additive
causal mask built per call with `torch.full(...).triu(1)`, and `softmax(scores.float()).type_as(xq)`."""

import math

import torch
import torch.nn.functional as F
from torch import nn


class RMSNorm(nn.Module):
    # Llama's norm, with Qwen's zero-centred weight: statistics and (1 + w) in fp32, one rounding.
    def __init__(self, dim: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.zeros(dim))

    def _norm(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)

    def forward(self, x):
        return (self._norm(x.float()) * (1.0 + self.weight.float())).type_as(x)


def apply_rotary_emb(xq, xk, cos, sin):
    # cos/sin: (seq, rotary_dim); xq/xk: (bsz, seqlen, heads, head_dim). Only the first
    # rotary_dim features rotate, as pairs (i, i + rotary_dim / 2).
    rot = cos.shape[-1]
    cos, sin = cos[None, :, None, :], sin[None, :, None, :]

    def rotate(x):
        x_rot, x_pass = x[..., :rot].float(), x[..., rot:]
        x1, x2 = x_rot[..., : rot // 2], x_rot[..., rot // 2 :]
        rotated = torch.cat((-x2, x1), dim=-1)
        return torch.cat(((x_rot * cos + rotated * sin).type_as(x), x_pass), dim=-1)

    return rotate(xq), rotate(xk)


def repeat_kv(x: torch.Tensor, n_rep: int) -> torch.Tensor:
    """torch.repeat_interleave(x, dim=2, repeats=n_rep)"""
    bs, slen, n_kv_heads, head_dim = x.shape
    if n_rep == 1:
        return x
    return (
        x[:, :, :, None, :]
        .expand(bs, slen, n_kv_heads, n_rep, head_dim)
        .reshape(bs, slen, n_kv_heads * n_rep, head_dim)
    )


class GatedAttention(nn.Module):
    def __init__(self, dim, n_heads, n_kv_heads, head_dim, eps=1e-6):
        super().__init__()
        self.n_local_heads = n_heads
        self.n_local_kv_heads = n_kv_heads
        self.n_rep = n_heads // n_kv_heads
        self.head_dim = head_dim
        self.q_proj = nn.Linear(dim, n_heads * head_dim * 2, bias=False)
        self.k_proj = nn.Linear(dim, n_kv_heads * head_dim, bias=False)
        self.v_proj = nn.Linear(dim, n_kv_heads * head_dim, bias=False)
        self.o_proj = nn.Linear(n_heads * head_dim, dim, bias=False)
        self.q_norm = RMSNorm(head_dim, eps=eps)
        self.k_norm = RMSNorm(head_dim, eps=eps)

    def forward(self, x, cos, sin):
        bsz, seqlen, _ = x.shape
        xqg = self.q_proj(x).view(bsz, seqlen, self.n_local_heads, 2 * self.head_dim)
        xq, gate = xqg[..., : self.head_dim], xqg[..., self.head_dim :]
        xk = self.k_proj(x).view(bsz, seqlen, self.n_local_kv_heads, self.head_dim)
        xv = self.v_proj(x).view(bsz, seqlen, self.n_local_kv_heads, self.head_dim)

        xq, xk = apply_rotary_emb(self.q_norm(xq), self.k_norm(xk), cos, sin)

        keys = repeat_kv(xk, self.n_rep)  # (bs, seqlen, n_local_heads, head_dim)
        values = repeat_kv(xv, self.n_rep)
        xq, keys, values = xq.transpose(1, 2), keys.transpose(1, 2), values.transpose(1, 2)

        scores = torch.matmul(xq.float(), keys.float().transpose(2, 3)) / math.sqrt(self.head_dim)
        mask = torch.full((seqlen, seqlen), float("-inf"), device=x.device).triu(1)
        scores = scores + mask  # (bs, n_local_heads, seqlen, seqlen)
        scores = F.softmax(scores, dim=-1)
        output = torch.matmul(scores, values.float()).type_as(xq)
        output = output.transpose(1, 2).reshape(bsz, seqlen, -1)
        gate = gate.reshape(bsz, seqlen, -1)
        output = (output.float() * torch.sigmoid(gate.float())).type_as(x)
        return self.o_proj(output)
