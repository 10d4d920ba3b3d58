"""Accepted: no mask at all. Each query of the chunk attends to the prefix it may see; kv heads
are indexed per query head with h // group."""

import torch


class KVCache:
    def __init__(self, batch, n_kv_heads, max_len, head_dim, dtype=torch.float32):
        self.k = torch.zeros((batch, n_kv_heads, max_len, head_dim), dtype=dtype)
        self.v = torch.zeros((batch, n_kv_heads, max_len, head_dim), dtype=dtype)
        self.length = 0

    def update(self, k, v):
        t = k.shape[2]
        if self.length + t > self.k.shape[2]:
            raise ValueError("KV cache is full")
        positions = torch.arange(self.length, self.length + t)
        self.k.index_copy_(2, positions, k.to(self.k.dtype))
        self.v.index_copy_(2, positions, v.to(self.v.dtype))
        self.length += t
        return self.k[:, :, : self.length], self.v[:, :, : self.length]


def cached_attention(q, k, v, cache):
    past = cache.length
    k_all, v_all = cache.update(k, v)
    n_heads, n_kv = q.shape[1], k_all.shape[1]
    kv_index = torch.arange(n_heads) // (n_heads // n_kv)
    k_h = k_all[:, kv_index].float()  # (batch, n_heads, total, head_dim)
    v_h = v_all[:, kv_index].float()
    scale = q.shape[-1] ** -0.5
    rows = []
    for j in range(q.shape[2]):
        visible = past + j + 1
        s = (q[:, :, j : j + 1].float() * scale) @ k_h[:, :, :visible].transpose(-1, -2)
        rows.append(torch.softmax(s, dim=-1) @ v_h[:, :, :visible])
    return torch.cat(rows, dim=2).to(q.dtype)
