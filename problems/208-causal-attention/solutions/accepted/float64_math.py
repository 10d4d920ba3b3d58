"""Everything in float64, rounded once to q's dtype at the end."""

import math

import torch


def attention(q, k, v, padding_mask=None):
    seq, head_dim = q.shape[-2], q.shape[-1]
    qd, kd, vd = q.double(), k.double(), v.double()
    scores = qd @ kd.transpose(-2, -1) / math.sqrt(head_dim)
    allowed = torch.tril(torch.ones(seq, seq, dtype=torch.bool))
    if padding_mask is not None:
        allowed = allowed & padding_mask.bool()[:, None, None, :]
    scores = scores.masked_fill(~allowed, float("-inf"))
    m = scores.amax(-1, keepdim=True)
    m = torch.nan_to_num(m, neginf=0.0)
    p = (scores - m).exp()
    z = p.sum(-1, keepdim=True)
    p = p / z.clamp_min(1e-300)
    return (p @ vd).to(q.dtype)
