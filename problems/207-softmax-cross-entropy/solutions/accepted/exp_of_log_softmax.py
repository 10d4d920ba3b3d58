"""softmax as exp(log_softmax), max().values for the shift, gather for the NLL, boolean-mask mean."""

import torch


def _lsm(x, dim):
    xf = x.to(torch.float32)
    m = xf.max(dim=dim, keepdim=True).values
    z = xf - m
    return z - torch.log(torch.sum(torch.exp(z), dim=dim, keepdim=True))


def softmax(x, dim=-1):
    return torch.exp(_lsm(x, dim)).to(x.dtype)


def log_softmax(x, dim=-1):
    return _lsm(x, dim).to(x.dtype)


def cross_entropy(logits, targets, ignore_index=-100):
    logp = _lsm(logits, -1).reshape(-1, logits.shape[-1])
    t = targets.reshape(-1)
    keep = t != ignore_index
    # Indexing with a mask leaves an empty tensor when nothing counts; its mean is NaN.
    picked = logp[keep].gather(1, t[keep].unsqueeze(1)).squeeze(1)
    return -picked.mean()
