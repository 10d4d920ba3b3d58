"""因果掩码差了一位：位置 i 只能看到键 0..i，你的掩码还放进了键 i+1（torch.tril(ones, diagonal=1)，或 triu 用了 diagonal=2）。训练时模型就能直接偷看它要预测的下一个 token，损失很低，生成时却一塌糊涂。允许的键是 tril(ones)（diagonal=0），要屏蔽的是 triu(ones, diagonal=1)。
Your causal mask is off by one: position i may see keys 0..i, and yours lets in key i+1 too (torch.tril(ones, diagonal=1), or triu with diagonal=2). In training the model could read the very token it is asked to predict: a suspiciously low loss and useless generation. The allowed keys are tril(ones) (diagonal=0); the ones to hide are triu(ones, diagonal=1)."""

import math

import torch


def attention(q, k, v, padding_mask=None):
    seq, head_dim = q.shape[-2], q.shape[-1]
    scores = q.float() @ k.float().transpose(-2, -1) / math.sqrt(head_dim)
    allowed = torch.tril(torch.ones(seq, seq, dtype=torch.bool), diagonal=1)
    if padding_mask is not None:
        allowed = allowed & padding_mask[:, None, None, :]
    scores = scores.masked_fill(~allowed, float("-inf"))
    m = scores.amax(-1, keepdim=True)
    m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))
    p = (scores - m).exp()
    s = p.sum(-1, keepdim=True)
    p = p / torch.where(s > 0, s, torch.ones_like(s))
    return (p @ v.float()).to(q.dtype)
