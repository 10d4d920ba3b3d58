"""你把被忽略的位置也算进了平均值的分母：损失被除以全部 token 数，而不是参与计算的 token 数，
填充越多损失越小。只对 targets != ignore_index 的位置求和，再除以这些位置的个数。
You count ignored positions in the mean's denominator: the loss is divided by every token rather than by
the counted ones, so more padding means a smaller loss. Sum over the positions where targets !=
ignore_index and divide by how many there are."""

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
    return torch.where(keep, nll, 0.0).sum() / targets.numel()
