import math

import torch


class KVCache:
    """预分配的 KV 缓存。
    A preallocated KV cache.

    缓冲区形状 (batch, n_kv_heads, max_len, head_dim)，dtype 为 dtype；
    length 是已经存入的 token 数（开始时为 0）。
    Buffers of shape (batch, n_kv_heads, max_len, head_dim) in `dtype`;
    `length` is the number of tokens stored so far (0 at the start).
    """

    def __init__(self, batch, n_kv_heads, max_len, head_dim, dtype=torch.float32):
        # TODO: 一次性分配 k、v 两个缓冲区，并设置 self.length = 0
        # TODO: allocate the k and v buffers once, and set self.length = 0
        raise NotImplementedError

    def update(self, k, v):
        """把 (batch, n_kv_heads, t, head_dim) 的 k、v 写到位置 length .. length+t-1，
        length 增加 t，返回前 length 个位置的视图 (k_all, v_all)。超出 max_len 时抛出 ValueError。
        Write k, v of shape (batch, n_kv_heads, t, head_dim) at positions length .. length+t-1,
        advance length by t and return views (k_all, v_all) of the first `length` positions.
        Raise ValueError when the chunk does not fit in max_len.
        """
        raise NotImplementedError


def cached_attention(q, k, v, cache):
    """新的一块 token 的因果注意力。
    Causal attention for a chunk of new tokens.

    q: (batch, n_heads, t, head_dim)；k, v: (batch, n_kv_heads, t, head_dim)。
    先把 k、v 存进 cache，再让第 j 个 query（绝对位置 = 存入前的 cache.length + j）
    看到位置不超过它的所有 key。返回 (batch, n_heads, t, head_dim)，dtype 与 q 相同。
    Store k, v in the cache, then let query j (absolute position = cache.length before the
    update + j) attend to every key at or before its position. Returns
    (batch, n_heads, t, head_dim) in q's dtype.
    """
    raise NotImplementedError
