"""softmax 在 fp32 里算了，但你把注意力权重转回了 bf16 再和 v 相乘（transformers 的 eager 实现就是这样做的）。每个权重多舍入一次，10%–20% 的输出元素差 1 个 ulp。本题要求加权和也在 fp32 中完成（v 也转成 fp32），只在最后把输出舍入到 q 的 dtype 一次。
The softmax is in fp32, but you round the attention weights back to bf16 before multiplying by v (as transformers' eager code does). That extra rounding moves 10-20% of the outputs by one ulp. This problem asks for the weighted sum in fp32 as well (v converted too), with a single rounding of the output to q's dtype at the end."""

import math

import torch


def attention(q, k, v, padding_mask=None):
    seq, head_dim = q.shape[-2], q.shape[-1]
    scores = q.float() @ k.float().transpose(-2, -1) / math.sqrt(head_dim)
    allowed = torch.ones(seq, seq, dtype=torch.bool).tril()
    if padding_mask is not None:
        allowed = allowed & padding_mask[:, None, None, :]
    scores = scores.masked_fill(~allowed, torch.finfo(torch.float32).min)
    p = torch.softmax(scores, dim=-1) * allowed.any(-1, keepdim=True)
    return p.to(v.dtype) @ v
