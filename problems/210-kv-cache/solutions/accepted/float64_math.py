"""Accepted: the attention maths in float64, rounded once to q's dtype at the end."""

import math

import torch


class KVCache:
    def __init__(self, batch, n_kv_heads, max_len, head_dim, dtype=torch.float32):
        self.k = torch.zeros(batch, n_kv_heads, max_len, head_dim, dtype=dtype)
        self.v = torch.zeros(batch, n_kv_heads, max_len, head_dim, dtype=dtype)
        self.length = 0

    def update(self, k, v):
        t = k.shape[2]
        if self.length + t > self.k.shape[2]:
            raise ValueError(f"KV cache overflow ({self.length} + {t} > {self.k.shape[2]})")
        self.k[:, :, self.length : self.length + t] = k
        self.v[:, :, self.length : self.length + t] = v
        self.length += t
        return self.k[:, :, : self.length], self.v[:, :, : self.length]


def cached_attention(q, k, v, cache):
    past = cache.length
    k_all, v_all = cache.update(k, v)
    group = q.shape[1] // k_all.shape[1]
    kd = k_all.double().repeat_interleave(group, dim=1)
    vd = v_all.double().repeat_interleave(group, dim=1)
    t, total = q.shape[2], kd.shape[2]
    scores = (q.double() @ kd.transpose(-1, -2)) / math.sqrt(q.shape[-1])
    future = torch.arange(total)[None, :] > (past + torch.arange(t))[:, None]
    scores = scores.masked_fill(future, -math.inf)
    return (torch.softmax(scores, dim=-1) @ vd).to(q.dtype)
