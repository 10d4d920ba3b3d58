"""Reference for problem 210: a preallocated KV cache and causal attention over it."""

import math

import torch


class KVCache:
    def __init__(
        self, batch: int, n_kv_heads: int, max_len: int, head_dim: int, dtype: torch.dtype = torch.float32
    ) -> None:
        # Allocated once, at full size: decoding then never reallocates or copies old tokens.
        shape = (batch, n_kv_heads, max_len, head_dim)
        self.k = torch.zeros(shape, dtype=dtype)
        self.v = torch.zeros(shape, dtype=dtype)
        self.max_len = max_len
        self.length = 0

    def update(self, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        t = k.shape[2]
        end = self.length + t
        if end > self.max_len:
            raise ValueError(f"KV cache overflow: {self.length} stored + {t} new > max_len {self.max_len}")
        # copy_ writes the values into the buffer (converting to its dtype); the caller's
        # tensors are not kept, so editing them later cannot change the cache.
        self.k[:, :, self.length : end].copy_(k)
        self.v[:, :, self.length : end].copy_(v)
        self.length = end
        return self.k[:, :, :end], self.v[:, :, :end]


def cached_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, cache: KVCache) -> torch.Tensor:
    past = cache.length  # tokens already stored: the chunk starts at this absolute position
    k_all, v_all = cache.update(k, v)
    n_heads, n_kv = q.shape[1], k_all.shape[1]
    group = n_heads // n_kv
    # Query head h reads kv head h // group: repeat each kv head `group` times in a row.
    k_all = k_all.repeat_interleave(group, dim=1).float()
    v_all = v_all.repeat_interleave(group, dim=1).float()
    t, total = q.shape[2], k_all.shape[2]
    scores = q.float() @ k_all.transpose(-1, -2) / math.sqrt(q.shape[-1])
    # Query j sits at absolute position past + j and may see keys 0 .. past + j.
    q_pos = past + torch.arange(t).unsqueeze(1)
    k_pos = torch.arange(total).unsqueeze(0)
    scores = scores.masked_fill(k_pos > q_pos, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return (weights @ v_all).to(q.dtype)
