"""你没有先减去最大值就直接取 exp：fp32 中 logits 超过约 88（fp16 中超过约 11）时 exp 溢出为 inf，inf
/ inf 得到 NaN。先减去每行的最大值——结果在数学上不变，但最大的指数变成 exp(0) = 1。
You take exp without subtracting the row maximum first: exp overflows to inf for logits above about 88
in fp32 (about 11 in fp16), and inf / inf gives NaN. Subtract each row's maximum first: the result is
mathematically the same, but the largest exponent becomes exp(0) = 1."""

import torch


def softmax(x, dim=-1):
    e = x.float().exp()
    return (e / e.sum(dim, keepdim=True)).to(x.dtype)


def _lsm(x, dim):
    xf = x.float()
    return xf - xf.exp().sum(dim, keepdim=True).log()


def log_softmax(x, dim=-1):
    return _lsm(x, dim).to(x.dtype)


def cross_entropy(logits, targets, ignore_index=-100):
    logp = _lsm(logits, -1)
    keep = targets != ignore_index
    nll = -logp.gather(-1, targets.clamp_min(0).unsqueeze(-1)).squeeze(-1)
    return torch.where(keep, nll, 0.0).sum() / keep.sum()
