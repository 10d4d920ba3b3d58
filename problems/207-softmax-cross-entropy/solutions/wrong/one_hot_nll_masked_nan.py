"""你用 one-hot 向量点乘全部对数概率来取目标的 -log p：被屏蔽的词对数概率是 -inf，而 0 × (-inf) 是 NaN，
整个损失就成了 NaN。只取目标位置的那一个对数概率（gather 或索引），被屏蔽的词就根本不参与计算。
You take the target's -log p as a one-hot dot product with every log-probability: a masked entry's
log-probability is -inf, and 0 * (-inf) is NaN, so the whole loss becomes NaN. Pick the target's
log-probability alone (gather or indexing) and masked entries never enter the sum."""

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
