"""amax shift, reciprocal of the sum, one-hot dot product for the NLL, explicit count."""

import torch


def softmax(x, dim=-1):
    xf = x.float()
    e = torch.exp(xf - torch.amax(xf, dim, keepdim=True))
    return (e * e.sum(dim, keepdim=True).reciprocal()).to(x.dtype)


def _log_softmax32(x, dim):
    xf = x.float()
    m = torch.amax(xf, dim, keepdim=True)
    lse = m + torch.log(torch.exp(xf - m).sum(dim, keepdim=True))
    return xf - lse


def log_softmax(x, dim=-1):
    return _log_softmax32(x, dim).to(x.dtype)


def cross_entropy(logits, targets, ignore_index=-100):
    vocab = logits.shape[-1]
    logp = _log_softmax32(logits, -1)
    keep = targets.ne(ignore_index)
    # Ignored targets become class 0 and then get a zero row, so they add nothing.
    cls = targets.masked_fill(~keep, 0)
    onehot = torch.nn.functional.one_hot(cls, vocab).to(logp.dtype) * keep.unsqueeze(-1).to(logp.dtype)
    total = -(onehot * logp).sum()
    count = keep.sum().to(torch.float32)
    return total / count
