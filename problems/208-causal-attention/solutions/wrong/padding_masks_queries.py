"""填充掩码要屏蔽的是键（分数矩阵的列，padding_mask[:, None, None, :]），不是查询（行）。你屏蔽了行：真实 token 仍然会去看左边的填充位置，把填充的 v 混进了输出。
The padding mask removes keys (the columns of the score matrix, padding_mask[:, None, None, :]), not queries (rows). You masked the rows, so real tokens still attend to the padding on their left and mix its values into their output."""

import math

import torch


def attention(q, k, v, padding_mask=None):
    seq, head_dim = q.shape[-2], q.shape[-1]
    scores = q.float() @ k.float().transpose(-2, -1) / math.sqrt(head_dim)
    allowed = torch.ones(seq, seq, dtype=torch.bool).tril()
    if padding_mask is not None:
        allowed = allowed & padding_mask[:, None, :, None]
    scores = scores.masked_fill(~allowed, float("-inf"))
    m = scores.amax(-1, keepdim=True)
    m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))
    p = (scores - m).exp()
    s = p.sum(-1, keepdim=True)
    p = p / torch.where(s > 0, s, torch.ones_like(s))
    return (p @ v.float()).to(q.dtype)
