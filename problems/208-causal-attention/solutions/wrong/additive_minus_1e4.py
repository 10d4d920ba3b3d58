"""给被屏蔽的分数加上 -10000（老式 BERT 写法）并不能把键完全去掉：分数达到上万时（没有 QK-Norm、激活值变大的模型里会出现），一个被屏蔽的键加上 -1e4 之后仍可能比可见的键大，照样拿走大部分权重。用 masked_fill 填 -inf（或 dtype 的最小值），让被屏蔽的键的权重精确为 0。
Adding -10000 to masked scores (the old BERT recipe) does not remove a key completely: once scores reach tens of thousands (as in models without QK-norm whose activations grow), a masked key minus 1e4 can still outscore the visible ones and take most of the weight. Use masked_fill with -inf (or the dtype's minimum) so that masked keys get exactly zero weight."""

import math

import torch


def attention(q, k, v, padding_mask=None):
    seq, head_dim = q.shape[-2], q.shape[-1]
    scores = q.float() @ k.float().transpose(-2, -1) / math.sqrt(head_dim)
    allowed = torch.ones(seq, seq, dtype=torch.bool).tril()
    if padding_mask is not None:
        allowed = allowed & padding_mask[:, None, None, :]
    scores = scores + (~allowed).float() * -10000.0
    p = torch.softmax(scores, dim=-1)
    p = p * allowed.any(-1, keepdim=True)
    return (p @ v.float()).to(q.dtype)
