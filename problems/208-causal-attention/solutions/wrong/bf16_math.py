"""输入是 bf16 时，你直接在 bf16 里算了分数、softmax 和加权和。bf16 只有 8 位有效二进制位（约 2～3 位十进制有效数字）：分数在 5 左右时误差就有 0.02，概率随之偏差 2%，输出许多元素错一到几个 ulp。先把 q、k、v 转成 fp32（.float()），全部在 fp32 中计算，最后只把输出转回 q 的 dtype 一次。
With bf16 inputs you compute the scores, the softmax and the weighted sum in bf16. bf16 keeps 8 significant bits: a score near 5 is already off by 0.02, the probabilities by 2%, and many outputs by one to several ulps. Convert q, k and v to fp32 (.float()), compute everything in fp32, and round the output to q's dtype once at the end."""

import math

import torch


def attention(q, k, v, padding_mask=None):
    seq, head_dim = q.shape[-2], q.shape[-1]
    scores = q @ k.transpose(-2, -1) / math.sqrt(head_dim)
    allowed = torch.ones(seq, seq, dtype=torch.bool).tril()
    if padding_mask is not None:
        allowed = allowed & padding_mask[:, None, None, :]
    has_key = allowed.any(-1, keepdim=True)
    scores = scores.masked_fill(~allowed, float("-inf"))
    scores = torch.where(has_key, scores, torch.zeros_like(scores))
    p = torch.softmax(scores, dim=-1) * has_key
    return p @ v
