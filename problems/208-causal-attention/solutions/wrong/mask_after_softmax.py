"""掩码要在 softmax 之前作用在分数上（填 -inf）。你先对所有键做了 softmax，再把被屏蔽的概率清零：剩下的权重之和不再是 1，未来的键虽然被清零了，却已经通过分母影响了结果。
Apply the mask to the scores before the softmax (fill with -inf). You take the softmax over every key and zero the masked probabilities afterwards: the remaining weights no longer sum to 1, and the future keys, though zeroed, still shaped the result through the denominator."""

import math

import torch


def attention(q, k, v, padding_mask=None):
    seq, head_dim = q.shape[-2], q.shape[-1]
    scores = q.float() @ k.float().transpose(-2, -1) / math.sqrt(head_dim)
    allowed = torch.ones(seq, seq, dtype=torch.bool).tril()
    if padding_mask is not None:
        allowed = allowed & padding_mask[:, None, None, :]
    scores = scores - scores.amax(-1, keepdim=True)
    p = scores.exp()
    p = p / p.sum(-1, keepdim=True)
    p = p * allowed
    return (p @ v.float()).to(q.dtype)
