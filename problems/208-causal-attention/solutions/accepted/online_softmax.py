"""Flash-attention style: walk over blocks of keys with a running maximum, sum and weighted sum."""

import math

import torch


def attention(q, k, v, padding_mask=None, block=4):
    batch, heads, seq, head_dim = q.shape
    qf, kf, vf = q.float(), k.float(), v.float()
    scale = 1.0 / math.sqrt(head_dim)
    query_pos = torch.arange(seq).view(seq, 1)
    run_max = torch.full((batch, heads, seq, 1), float("-inf"))
    run_sum = torch.zeros(batch, heads, seq, 1)
    acc = torch.zeros(batch, heads, seq, v.shape[-1])
    for start in range(0, seq, block):
        stop = min(start + block, seq)
        s = torch.matmul(qf, kf[:, :, start:stop].transpose(-1, -2)) * scale
        ok = torch.arange(start, stop).view(1, -1) <= query_pos  # (seq, block)
        ok = ok.view(1, 1, seq, -1)
        if padding_mask is not None:
            ok = ok & padding_mask[:, start:stop].bool().view(batch, 1, 1, -1)
        s = torch.where(ok, s, torch.full_like(s, float("-inf")))
        new_max = torch.maximum(run_max, s.amax(dim=-1, keepdim=True))
        # While a row has seen no key its maximum is still -inf: use 0 as the shift there.
        shift = torch.where(torch.isfinite(new_max), new_max, torch.zeros_like(new_max))
        rescale = torch.exp(run_max - shift)
        p = torch.exp(s - shift)
        run_sum = run_sum * rescale + p.sum(dim=-1, keepdim=True)
        acc = acc * rescale + torch.matmul(p, vf[:, :, start:stop])
        run_max = new_max
    out = acc / torch.where(run_sum > 0, run_sum, torch.ones_like(run_sum))
    return out.to(q.dtype)
