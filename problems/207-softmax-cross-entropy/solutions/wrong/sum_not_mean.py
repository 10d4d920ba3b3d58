"""你返回的是各个 token 损失的总和，而不是平均值：损失随批大小和序列长度线性增长。除以参与计算的 token
个数。
You return the sum of the per-token losses instead of their mean: the loss grows with batch size and
sequence length. Divide by the number of counted tokens."""

import torch


def _lsm(x, dim):
    xf = x.float()
    z = xf - xf.amax(dim, keepdim=True)
    return z - z.exp().sum(dim, keepdim=True).log()


def softmax(x, dim=-1):
    return _lsm(x, dim).exp().to(x.dtype)


def log_softmax(x, dim=-1):
    return _lsm(x, dim).to(x.dtype)


def cross_entropy(logits, targets, ignore_index=-100):
    logp = _lsm(logits, -1)
    keep = targets != ignore_index
    nll = -logp.gather(-1, targets.clamp_min(0).unsqueeze(-1)).squeeze(-1)
    return torch.where(keep, nll, 0.0).sum()
