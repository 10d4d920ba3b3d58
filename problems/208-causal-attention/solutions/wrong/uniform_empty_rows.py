"""被屏蔽的分数填了一个有限的最小值（torch.finfo(...).min），于是没有任何可见键的行（左填充的填充位置）里所有分数相等，softmax 给出均匀分布，输出成了整行 v 的平均值，包括未来的 token。本题规定这样的行输出 0：算完后把没有可见键的行置 0（allowed.any(-1)），或者填 -inf 并处理 0/0。
You fill masked scores with a finite minimum (torch.finfo(...).min), so in a row with no visible key (a padded position under left padding) all scores are equal, the softmax is uniform, and the output is the average of every value in the row, future tokens included. This problem defines such rows to output 0: zero the rows without a visible key (allowed.any(-1)) afterwards, or fill with -inf and handle 0/0."""

import math

import torch


def attention(q, k, v, padding_mask=None):
    seq, head_dim = q.shape[-2], q.shape[-1]
    scores = q.float() @ k.float().transpose(-2, -1) / math.sqrt(head_dim)
    allowed = torch.ones(seq, seq, dtype=torch.bool).tril()
    if padding_mask is not None:
        allowed = allowed & padding_mask[:, None, None, :]
    scores = scores.masked_fill(~allowed, torch.finfo(scores.dtype).min)
    p = torch.softmax(scores, dim=-1)
    return (p @ v.float()).to(q.dtype)
