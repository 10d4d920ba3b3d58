"""Accepted: index_copy_ into the buffers; kv heads expanded with a view (no copy); a
transformers-style additive mask of 0 and finfo.min instead of -inf. Every query sees at least
key 0, so its row has a finite maximum and exp(finfo.min - max) is exactly 0, like exp(-inf)."""

import math

import torch


class KVCache:
    def __init__(self, batch, n_kv_heads, max_len, head_dim, dtype=torch.float32):
        self.k_cache = torch.zeros(batch, n_kv_heads, max_len, head_dim, dtype=dtype)
        self.v_cache = torch.zeros(batch, n_kv_heads, max_len, head_dim, dtype=dtype)
        self.length = 0

    def update(self, k, v):
        t = k.shape[2]
        if self.length + t > self.k_cache.shape[2]:
            left = self.k_cache.shape[2] - self.length
            raise ValueError(f"KV cache full: {left} positions left, chunk of {t}")
        positions = torch.arange(self.length, self.length + t)
        self.k_cache.index_copy_(2, positions, k.to(self.k_cache.dtype))
        self.v_cache.index_copy_(2, positions, v.to(self.v_cache.dtype))
        self.length += t
        return self.k_cache[:, :, : self.length], self.v_cache[:, :, : self.length]


def cached_attention(q, k, v, cache):
    past = cache.length
    k_all, v_all = cache.update(k, v)
    b, h, t, d = q.shape
    n_kv, total = k_all.shape[1], k_all.shape[2]
    g = h // n_kv
    # (b, n_kv, total, d) -> (b, n_kv, g, total, d) -> (b, h, total, d): head h reads kv head h // g.
    keys = k_all.float()[:, :, None].expand(b, n_kv, g, total, d).reshape(b, h, total, d)
    values = v_all.float()[:, :, None].expand(b, n_kv, g, total, d).reshape(b, h, total, d)
    scores = torch.matmul(q.float(), keys.transpose(2, 3)) / math.sqrt(d)
    query_pos = torch.arange(past, past + t).view(t, 1)
    key_pos = torch.arange(total).view(1, total)
    bias = torch.zeros(t, total).masked_fill(key_pos > query_pos, torch.finfo(torch.float32).min)
    weights = torch.softmax(scores + bias, dim=-1)
    return torch.matmul(weights, values).to(q.dtype)
