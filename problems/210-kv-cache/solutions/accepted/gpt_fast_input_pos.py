"""The cache in gpt-fast's style: buffers written with `index_copy_` at `input_pos`, and a causal
mask of max_len x max_len built once in the constructor, whose rows `input_pos` are the chunk's
mask. Both depend only on the constructor's arguments and the current length."""

import math

import torch
from torch import Tensor


class KVCache:
    def __init__(self, batch, n_kv_heads, max_len, head_dim, dtype=torch.float32):
        cache_shape = (batch, n_kv_heads, max_len, head_dim)
        self.k_cache = torch.zeros(cache_shape, dtype=dtype)
        self.v_cache = torch.zeros(cache_shape, dtype=dtype)
        self.causal_mask = torch.tril(torch.ones(max_len, max_len, dtype=torch.bool))
        self.max_seq_length = max_len
        self.length = 0

    def update(self, k_val: Tensor, v_val: Tensor) -> tuple[Tensor, Tensor]:
        n = k_val.shape[2]
        if self.length + n > self.max_seq_length:
            raise ValueError(f"cache full: {self.length} + {n} > {self.max_seq_length}")
        input_pos = torch.arange(self.length, self.length + n)
        self.k_cache.index_copy_(2, input_pos, k_val.to(self.k_cache.dtype))
        self.v_cache.index_copy_(2, input_pos, v_val.to(self.v_cache.dtype))
        self.length += n
        return self.k_cache[:, :, : self.length], self.v_cache[:, :, : self.length]


def cached_attention(q: Tensor, k: Tensor, v: Tensor, cache: KVCache) -> Tensor:
    input_pos = torch.arange(cache.length, cache.length + q.shape[2])
    k, v = cache.update(k, v)
    mask = cache.causal_mask[input_pos, : k.shape[2]]  # (t, length): row p + j of the big mask
    n_rep = q.shape[1] // k.shape[1]
    k = k.repeat_interleave(n_rep, dim=1).float()
    v = v.repeat_interleave(n_rep, dim=1).float()
    att = (q.float() @ k.transpose(-2, -1)) * (1.0 / math.sqrt(q.shape[-1]))
    att = att.masked_fill(~mask, float("-inf")).softmax(dim=-1)
    return (att @ v).to(q.dtype)
