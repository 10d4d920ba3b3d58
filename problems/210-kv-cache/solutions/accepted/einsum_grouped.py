"""Accepted: slice assignment into zero buffers; grouped einsum without repeating kv heads; a
mask built as [past keys all visible | causal triangle over the chunk]; softmax written out."""

import math

import torch


class KVCache:
    def __init__(self, batch, n_kv_heads, max_len, head_dim, dtype=torch.float32):
        self.keys = torch.zeros(batch, n_kv_heads, max_len, head_dim, dtype=dtype)
        self.values = torch.zeros(batch, n_kv_heads, max_len, head_dim, dtype=dtype)
        self.max_len = max_len
        self.length = 0

    def update(self, k, v):
        new_len = self.length + k.shape[-2]
        if new_len > self.max_len:
            raise ValueError(f"cannot store {new_len} tokens in a cache of max_len {self.max_len}")
        self.keys[..., self.length : new_len, :] = k
        self.values[..., self.length : new_len, :] = v
        self.length = new_len
        return self.keys[..., :new_len, :], self.values[..., :new_len, :]


def cached_attention(q, k, v, cache):
    past = cache.length
    keys, values = cache.update(k, v)
    b, h, t, d = q.shape
    kv = keys.shape[1]
    qg = q.float().reshape(b, kv, h // kv, t, d)  # query heads grouped by the kv head they read
    scores = torch.einsum("bkgtd,bksd->bkgts", qg, keys.float()) * (1.0 / math.sqrt(d))
    blocked = torch.cat(
        [torch.zeros(t, past, dtype=torch.bool), torch.ones(t, t, dtype=torch.bool).triu(1)], dim=1
    )
    scores = scores.masked_fill(blocked, -math.inf)
    e = (scores - scores.amax(dim=-1, keepdim=True)).exp()
    p = e / e.sum(dim=-1, keepdim=True)
    out = torch.einsum("bkgts,bksd->bkgtd", p, values.float())
    return out.reshape(b, h, t, d).to(q.dtype)
