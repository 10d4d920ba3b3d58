"""softmax 要沿键的那一维做（分数 (batch, heads, 查询, 键) 的最后一维，dim=-1）：每个查询在它能看到的键上分配总和为 1 的权重。你沿查询那一维（dim=-2）归一化了。
Take the softmax over the keys (the last axis of the (batch, heads, query, key) scores, dim=-1): each query spreads weights summing to 1 over the keys it can see. You normalised over the queries (dim=-2)."""

import math

import torch


def attention(q, k, v, padding_mask=None):
    seq, head_dim = q.shape[-2], q.shape[-1]
    scores = q.float() @ k.float().transpose(-2, -1) / math.sqrt(head_dim)
    allowed = torch.ones(seq, seq, dtype=torch.bool).tril()
    if padding_mask is not None:
        allowed = allowed & padding_mask[:, None, None, :]
    scores = scores.masked_fill(~allowed, float("-inf"))
    m = scores.amax(-2, keepdim=True)
    m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))
    p = (scores - m).exp()
    s = p.sum(-2, keepdim=True)
    p = p / torch.where(s > 0, s, torch.ones_like(s))
    return (p @ v.float()).to(q.dtype)
