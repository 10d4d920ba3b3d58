"""softmax 之前没有减去行最大值：分数超过 88 左右时 exp 在 fp32 中溢出成 inf，inf/inf = NaN。先减去每行（可见键中）的最大值，最大的一项就是 exp(0) = 1；没有可见键的行，用 0 代替 -inf 的最大值。
You do not subtract the row maximum before exp: once a score passes about 88, exp overflows to inf in fp32 and inf/inf = NaN. Subtract each row's maximum over the visible keys first, so that the largest term is exp(0) = 1; in a row with no visible key, use 0 instead of a -inf maximum."""

import math

import torch


def attention(q, k, v, padding_mask=None):
    seq, head_dim = q.shape[-2], q.shape[-1]
    scores = q.float() @ k.float().transpose(-2, -1) / math.sqrt(head_dim)
    allowed = torch.ones(seq, seq, dtype=torch.bool).tril()
    if padding_mask is not None:
        allowed = allowed & padding_mask[:, None, None, :]
    scores = scores.masked_fill(~allowed, float("-inf"))
    p = scores.exp()
    s = p.sum(-1, keepdim=True)
    p = p / torch.where(s > 0, s, torch.ones_like(s))
    return (p @ v.float()).to(q.dtype)
