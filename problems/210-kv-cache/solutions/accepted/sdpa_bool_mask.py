"""Accepted: narrow().copy_() into empty buffers; SDPA (fp32) with an explicit boolean mask and enable_gqa."""

import torch
import torch.nn.functional as F


class KVCache:
    def __init__(self, batch, n_kv_heads, max_len, head_dim, dtype=torch.float32):
        # empty, not zeros: positions past `length` are never read, so their contents do not matter.
        self.k_buf = torch.empty(batch, n_kv_heads, max_len, head_dim, dtype=dtype)
        self.v_buf = torch.empty_like(self.k_buf)
        self.length = 0

    def update(self, k, v):
        t = k.size(2)
        room = self.k_buf.size(2) - self.length
        if t > room:
            raise ValueError(f"only {room} positions left in the cache, got a chunk of {t}")
        self.k_buf.narrow(2, self.length, t).copy_(k)
        self.v_buf.narrow(2, self.length, t).copy_(v)
        self.length += t
        return self.k_buf.narrow(2, 0, self.length), self.v_buf.narrow(2, 0, self.length)


def cached_attention(q, k, v, cache):
    start = cache.length
    k_all, v_all = cache.update(k, v)
    t, total = q.size(2), k_all.size(2)
    # True = may attend. Key s is visible to query j when s <= start + j.
    allowed = torch.ones(t, total, dtype=torch.bool).tril(diagonal=start)
    out = F.scaled_dot_product_attention(
        q.float(), k_all.float(), v_all.float(), attn_mask=allowed, enable_gqa=True
    )
    return out.to(q.dtype)
