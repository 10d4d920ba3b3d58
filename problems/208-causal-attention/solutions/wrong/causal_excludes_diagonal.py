"""因果掩码把对角线也屏蔽了：位置 i 应该能看到键 0..i，包括它自己。torch.triu(ones, diagonal=1) 标出的才是要屏蔽的"未来"；用 diagonal=0 会连 j = i 一起屏蔽，第一个 token 什么也看不到。
Your causal mask also hides the diagonal: position i must see keys 0..i, itself included. The future to hide is torch.triu(ones, diagonal=1); with diagonal=0 the key j = i is hidden too and the first token sees nothing at all."""

import math

import torch


def attention(q, k, v, padding_mask=None):
    seq, head_dim = q.shape[-2], q.shape[-1]
    scores = q.float() @ k.float().transpose(-2, -1) / math.sqrt(head_dim)
    future = torch.triu(torch.ones(seq, seq, dtype=torch.bool), diagonal=0)
    blocked = future.expand(scores.shape)
    if padding_mask is not None:
        blocked = blocked | ~padding_mask[:, None, None, :]
    scores = scores.masked_fill(blocked, float("-inf"))
    m = scores.amax(-1, keepdim=True)
    m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))
    p = (scores - m).exp()
    s = p.sum(-1, keepdim=True)
    p = p / torch.where(s > 0, s, torch.ones_like(s))
    return (p @ v.float()).to(q.dtype)
