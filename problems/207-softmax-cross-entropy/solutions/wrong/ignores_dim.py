"""你忽略了 dim 参数，总是在最后一维上做 softmax / log_softmax。最大值、求和都要沿调用者给的 dim
进行（keepdim=True 以便广播）。
You ignore the `dim` argument and always normalise over the last axis. Take the maximum and the sum
along the `dim` you are given (with keepdim=True so they broadcast)."""

import torch


def _lsm(x):
    xf = x.float()
    z = xf - xf.amax(-1, keepdim=True)
    return z - z.exp().sum(-1, keepdim=True).log()


def softmax(x, dim=-1):
    return _lsm(x).exp().to(x.dtype)


def log_softmax(x, dim=-1):
    return _lsm(x).to(x.dtype)


def cross_entropy(logits, targets, ignore_index=-100):
    logp = _lsm(logits)
    keep = targets != ignore_index
    nll = -logp.gather(-1, targets.clamp_min(0).unsqueeze(-1)).squeeze(-1)
    return torch.where(keep, nll, 0.0).sum() / keep.sum()
