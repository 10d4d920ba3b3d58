"""对于没有任何可见键的行（左填充时填充位置上的查询），你返回了所有值的平均（连未来的 token 也算进去）；题目要求这样的行输出 0。常见原因：被屏蔽的分数填了一个有限的最小值（torch.finfo(...).min），这一行的分数于是全都相等，softmax 给出均匀分布。算完后把没有可见键的行置 0（allowed.any(-1)），或者填 -inf 并处理 0/0。
For a row with no visible key (a query at a padded position under left padding) you return the average of all values, future tokens included; the statement asks for zeros. The usual cause: masked scores filled with a finite minimum (torch.finfo(...).min), so every score in that row is equal and the softmax is uniform. Zero the rows without a visible key (allowed.any(-1)) afterwards, or fill with -inf and handle 0/0."""

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
