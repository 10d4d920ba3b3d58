"""nanoGPT's CausalSelfAttention core: one lower-triangular `bias` buffer built once and sliced to
`[:T, :T]` for every call, `att = (q @ k.T) * (1 / sqrt(d))`, `masked_fill(-inf)`, softmax, `att @ v`.
nanoGPT builds the buffer in the constructor for block_size; a function has no constructor, so
the buffer lives at module level and is rebuilt, larger, when a longer sequence arrives. Its
values never depend on a call's data (row i, column j is j <= i at every size), so slicing it is
right for any length. nanoGPT has no padding; here the padding mask is and-ed in, and rows left
with no key get finite scores and a zero output."""

import math

import torch
import torch.nn.functional as F

_bias: dict[torch.device, torch.Tensor] = {}  # per device: the largest causal mask built so far


def _causal(T: int, device: torch.device) -> torch.Tensor:
    bias = _bias.get(device)
    if bias is None or bias.shape[-1] < T:
        size = max(T, 2 * bias.shape[-1] if bias is not None else 64)
        bias = torch.tril(torch.ones(size, size, dtype=torch.bool, device=device)).view(1, 1, size, size)
        _bias[device] = bias
    return bias[:, :, :T, :T]


def attention(q, k, v, padding_mask=None):
    T = q.size(-2)  # q: (B, nh, T, hs)
    dtype = q.dtype
    q, k, v = q.float(), k.float(), v.float()  # fp32 inside, one rounding at the end
    att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
    keep = _causal(T, q.device)
    if padding_mask is not None:
        keep = keep & padding_mask.bool()[:, None, None, :]  # (B, 1, T, T): keys only
    att = att.masked_fill(~keep, float("-inf"))
    # A query that sees no key (left padding) would softmax a row of -inf into NaN. Give such
    # rows scores of 0 (any finite value) and zero their output below: no NaN forward or backward.
    has_key = keep.any(dim=-1, keepdim=True)
    att = att.masked_fill(~has_key, 0.0)
    att = F.softmax(att, dim=-1)
    y = (att @ v).masked_fill(~has_key, 0.0)
    return y.to(dtype)
