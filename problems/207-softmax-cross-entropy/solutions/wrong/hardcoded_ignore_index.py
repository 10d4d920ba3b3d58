"""你把要忽略的标签写死成了 -100，没有使用参数 ignore_index。调用者可能传入别的值（例如填充 token 的
id），要用参数本身来判断。
You hard-code -100 as the label to skip instead of using the `ignore_index` argument. Callers may pass
another value (for example the padding token's id); compare against the argument."""

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
    keep = targets != -100
    nll = -logp.gather(-1, targets.clamp_min(0).unsqueeze(-1)).squeeze(-1)
    return torch.where(keep, nll, 0.0).sum() / keep.sum()
