"""你减去的是整个张量的最大值（x.max() 没有指定 dim），而不是每一行自己的最大值：
某一行如果比全局最大值小几百，这一行的 exp 全部下溢为 0，0 / 0 得到 NaN
（log_softmax 里则是 log(0) = -inf）。沿 dim 取最大值，并保留维度：x.amax(dim, keepdim=True)。
You subtract the maximum of the whole tensor (x.max() with no dim) instead of each row's own maximum: a
row a few hundred below the global maximum underflows to all zeros after exp, and 0 / 0 gives NaN (in
log_softmax, log(0) = -inf). Take the maximum along `dim` and keep the axis: x.amax(dim, keepdim=True)."""

import torch


def softmax(x, dim=-1):
    xf = x.float()
    e = (xf - xf.max()).exp()
    return (e / e.sum(dim, keepdim=True)).to(x.dtype)


def _lsm(x, dim):
    xf = x.float()
    z = xf - xf.max()
    return z - z.exp().sum(dim, keepdim=True).log()


def log_softmax(x, dim=-1):
    return _lsm(x, dim).to(x.dtype)


def cross_entropy(logits, targets, ignore_index=-100):
    logp = _lsm(logits, -1)
    keep = targets != ignore_index
    nll = -logp.gather(-1, targets.clamp_min(0).unsqueeze(-1)).squeeze(-1)
    return torch.where(keep, nll, 0.0).sum() / keep.sum()
