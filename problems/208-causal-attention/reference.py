"""Reference for problem 208: causal scaled dot-product attention with a key padding mask."""

import math

import torch


def attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, padding_mask: torch.Tensor | None = None
) -> torch.Tensor:
    # q, k, v: (batch, heads, seq, head_dim); padding_mask: (batch, seq) bool, True = real token.
    seq, head_dim = q.shape[-2], q.shape[-1]
    # Everything in fp32: one upcast here, one rounding at the end. (.float() returns the very
    # same tensor for fp32 input, so nothing below may modify these in place.)
    qf, kf, vf = q.float(), k.float(), v.float()
    scores = (qf @ kf.transpose(-2, -1)) / math.sqrt(head_dim)  # (batch, heads, seq, seq)

    # allowed[i, j]: query i may look at key j. Causal: j <= i, the diagonal included.
    allowed = torch.ones(seq, seq, dtype=torch.bool, device=q.device).tril()
    if padding_mask is not None:
        # The mask removes KEYS (columns); it broadcasts over heads and query positions.
        allowed = allowed & padding_mask[:, None, None, :].to(torch.bool)
    scores = scores.masked_fill(~allowed, float("-inf"))

    # Stable softmax over the keys. A row with no allowed key has max -inf: shift it by 0
    # instead, so that every exp is exp(-inf) = 0 and the row sums to 0.
    row_max = scores.amax(dim=-1, keepdim=True)
    row_max = torch.where(torch.isfinite(row_max), row_max, torch.zeros_like(row_max))
    weights = torch.exp(scores - row_max)
    total = weights.sum(dim=-1, keepdim=True)
    # Dividing 0 by 0 would give NaN (and NaN gradients); divide by 1 there instead, which
    # leaves the row at exactly 0.
    weights = weights / torch.where(total > 0, total, torch.ones_like(total))
    return (weights @ vf).to(q.dtype)
