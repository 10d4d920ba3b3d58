"""amax shift, reciprocal of the sum, and a one-hot *selection* (not a product) for the NLL."""

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
    cls = targets.masked_fill(~keep, 0)
    pick = torch.nn.functional.one_hot(cls, vocab).bool() & keep.unsqueeze(-1)
    # where() takes the target's entry and 0 elsewhere; a product would turn 0 * -inf into NaN.
    total = -torch.where(pick, logp, torch.zeros((), dtype=logp.dtype)).sum()
    return total / keep.sum().to(torch.float32)
