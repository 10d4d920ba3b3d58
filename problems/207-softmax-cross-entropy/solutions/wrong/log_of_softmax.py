"""你用 log(softmax(x)) 计算 log_softmax：当某个概率小到在 fp32 中下溢为 0（与最大值相差超过约 104）
时，log(0) = -inf，而正确答案是一个有限的负数。直接在对数空间里算：x - max - log(sum(exp(x -
max)))。
You compute log_softmax as log(softmax(x)): when a probability underflows to 0 in fp32 (about 104 below
the maximum), log(0) = -inf, while the right answer is a finite negative number. Stay in log space: x -
max - log(sum(exp(x - max)))."""

import torch


def _softmax32(x, dim):
    xf = x.float()
    e = (xf - xf.amax(dim, keepdim=True)).exp()
    return e / e.sum(dim, keepdim=True)


def softmax(x, dim=-1):
    return _softmax32(x, dim).to(x.dtype)


def log_softmax(x, dim=-1):
    return _softmax32(x, dim).log().to(x.dtype)


def cross_entropy(logits, targets, ignore_index=-100):
    logp = _softmax32(logits, -1).log()
    keep = targets != ignore_index
    nll = -logp.gather(-1, targets.clamp_min(0).unsqueeze(-1)).squeeze(-1)
    return torch.where(keep, nll, 0.0).sum() / keep.sum()
