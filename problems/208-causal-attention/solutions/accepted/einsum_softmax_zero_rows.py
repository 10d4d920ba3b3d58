"""Scale q first, einsum, fill masked scores with the most negative fp32, torch.softmax, then zero empty rows."""

import torch


def attention(q, k, v, padding_mask=None):
    batch, _, seq, head_dim = q.shape
    qf = q.float() * head_dim**-0.5
    scores = torch.einsum("bhqd,bhkd->bhqk", qf, k.float())
    causal = torch.ones(seq, seq, dtype=torch.bool).tril()
    keep = causal.expand(batch, 1, seq, seq)
    if padding_mask is not None:
        keep = keep & padding_mask.bool().view(batch, 1, 1, seq)
    # A finite fill keeps every row finite: exp(min - max) is exactly 0 in any row that has a
    # real key, and a row with none comes out uniform, which is zeroed just below.
    scores = scores.masked_fill(~keep, torch.finfo(torch.float32).min)
    weights = torch.softmax(scores, dim=-1)
    weights = weights * keep.any(dim=-1, keepdim=True)
    out = torch.einsum("bhqk,bhkd->bhqd", weights, v.float())
    return out.type_as(q)
