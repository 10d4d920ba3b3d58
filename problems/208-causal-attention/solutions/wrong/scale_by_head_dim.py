"""分数要除以 √head_dim，而不是 head_dim。q·k 是 head_dim 项之和，它的标准差随 √head_dim 增长，除以 √d 才能把它拉回 1 左右；除以 d 会让分数小得多，softmax 变得过于平坦，每个位置都差不多平均地看所有的键。
Divide the scores by √head_dim, not by head_dim. q·k sums head_dim terms, so its spread grows like √head_dim, and dividing by √d brings it back to about 1; dividing by d shrinks the scores far too much and flattens the softmax towards a plain average of the visible keys."""

import torch


def attention(q, k, v, padding_mask=None):
    seq, head_dim = q.shape[-2], q.shape[-1]
    scores = q.float() @ k.float().transpose(-2, -1) / head_dim
    allowed = torch.ones(seq, seq, dtype=torch.bool).tril()
    if padding_mask is not None:
        allowed = allowed & padding_mask[:, None, None, :]
    scores = scores.masked_fill(~allowed, float("-inf"))
    m = scores.amax(-1, keepdim=True)
    m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))
    p = (scores - m).exp()
    s = p.sum(-1, keepdim=True)
    p = p / torch.where(s > 0, s, torch.ones_like(s))
    return (p @ v.float()).to(q.dtype)
