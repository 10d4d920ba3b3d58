"""你用 xf -= max 原地减去了最大值。对 fp32 的输入，x.float() 返回的就是 x 本身而不是副本，所以调用者的 logits 被悄悄改掉了：之后再用它们（换一个 dim 再算一次、计算别的损失、打印）都会得到错的结果，需要梯度的叶子张量还会直接报错。写成 z = xf - xf.amax(dim, keepdim=True)，得到一个新张量，不要原地修改输入。
You subtract the maximum in place with xf -= max. For an fp32 input, x.float() returns x itself, not a copy, so the caller's logits are silently changed: anything that uses them again (along another dim, for another loss, for logging) gets wrong values, and a leaf tensor that requires grad raises an error. Write z = xf - xf.amax(dim, keepdim=True), which makes a new tensor, and leave the input alone."""

import torch


def _lsm(x, dim):
    xf = x.float()  # for fp32 x this is the caller's tensor
    xf -= xf.amax(dim, keepdim=True)
    return xf - xf.exp().sum(dim, keepdim=True).log()


def softmax(x, dim=-1):
    xf = x.float()
    xf -= xf.amax(dim, keepdim=True)
    e = xf.exp()
    return (e / e.sum(dim, keepdim=True)).to(x.dtype)


def log_softmax(x, dim=-1):
    return _lsm(x, dim).to(x.dtype)


def cross_entropy(logits, targets, ignore_index=-100):
    logp = _lsm(logits, -1)
    keep = targets != ignore_index
    safe = torch.where(keep, targets, torch.zeros_like(targets))
    nll = -logp.gather(-1, safe.unsqueeze(-1)).squeeze(-1)
    return torch.where(keep, nll, torch.zeros_like(nll)).sum() / keep.sum()
