"""An additive 0 / -inf bias; rows without keys get plain zero scores, and their output is zeroed."""

import torch


def attention(q, k, v, padding_mask=None):
    seq, head_dim = q.shape[-2], q.shape[-1]
    rows = torch.arange(seq).unsqueeze(1)
    cols = torch.arange(seq).unsqueeze(0)
    visible = (cols <= rows).unsqueeze(0).unsqueeze(0)  # (1, 1, seq, seq)
    if padding_mask is not None:
        visible = visible & padding_mask.bool().unsqueeze(1).unsqueeze(2)
    bias = torch.zeros(visible.shape).masked_fill(~visible, float("-inf"))
    scores = q.float().matmul(k.float().transpose(2, 3)).div(head_dim**0.5) + bias
    has_key = visible.any(dim=-1, keepdim=True)
    # Give empty rows finite scores so that nothing, forward or backward, turns into NaN.
    scores = torch.where(has_key, scores, torch.zeros_like(scores))
    scores = scores - scores.amax(dim=-1, keepdim=True)
    e = scores.exp()
    weights = e / e.sum(dim=-1, keepdim=True)
    out = weights.matmul(v.float())
    out = torch.where(has_key, out, torch.zeros_like(out))
    return out.to(q.dtype)
