"""Move the axis last, a hand-written logsumexp with a clamp, loss = logsumexp - target logit."""

import torch


def _lse_last(xf):
    m = xf.max(-1, keepdim=True)[0]
    # The clamp guards the log against a zero sum; with the max shifted out the sum is >= 1
    # anyway, so it never changes a value here.
    s = torch.clamp((xf - m).exp().sum(-1, keepdim=True), min=torch.finfo(xf.dtype).tiny)
    return m + s.log()


def softmax(x, dim=-1):
    xf = x.float().movedim(dim, -1)
    p = (xf - _lse_last(xf)).exp()
    return p.movedim(-1, dim).to(x.dtype)


def log_softmax(x, dim=-1):
    xf = x.float().movedim(dim, -1)
    return (xf - _lse_last(xf)).movedim(-1, dim).to(x.dtype)


def cross_entropy(logits, targets, ignore_index=-100):
    xf = logits.float().reshape(-1, logits.shape[-1])
    t = targets.reshape(-1)
    rows = torch.nonzero(t != ignore_index).squeeze(1)
    # Per-token loss without building the whole log_softmax: logsumexp minus the target logit.
    losses = _lse_last(xf[rows]).squeeze(1) - xf[rows, t[rows]]
    return losses.sum() / rows.numel() if rows.numel() else torch.tensor(float("nan"))
