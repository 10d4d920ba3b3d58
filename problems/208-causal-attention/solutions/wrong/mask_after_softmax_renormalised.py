"""先对所有键做 softmax、再清零被屏蔽的概率并重新归一化，数学上等价，数值上却不行：当某个被屏蔽的（未来或填充的）键分数远高于可见的键时，可见键的概率在 fp32 中下溢成 0，重新归一化只剩 0/0。请在 softmax 之前把被屏蔽的分数填成 -inf，再减去可见键中的最大值。
Taking the softmax over all keys, then zeroing the masked probabilities and renormalising, is equal on paper but not in floating point: when a masked (future or padding) key scores far above the visible ones, the visible probabilities underflow to 0 in fp32 and the renormalisation is left with 0/0. Fill masked scores with -inf before the softmax, then subtract the maximum over the visible keys."""

import math

import torch


def attention(q, k, v, padding_mask=None):
    seq, head_dim = q.shape[-2], q.shape[-1]
    scores = q.float() @ k.float().transpose(-2, -1) / math.sqrt(head_dim)
    allowed = torch.ones(seq, seq, dtype=torch.bool).tril()
    if padding_mask is not None:
        allowed = allowed & padding_mask[:, None, None, :]
    p = torch.softmax(scores, dim=-1)
    p = p * allowed
    p = p / p.sum(-1, keepdim=True).clamp_min(1e-30)
    return (p @ v.float()).to(q.dtype)
