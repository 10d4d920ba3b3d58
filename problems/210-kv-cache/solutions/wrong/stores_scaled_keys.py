"""缓存里要存原样的 k：把 1/√head_dim 乘进 k 再存，注意力分数或许还对，但缓存的内容变了——别的代码（下一块的注意力、换一种缩放、保存下来复用的前缀）读到的都是缩放过的 key；bf16 缓存里还多了一次舍入。存 k 本身，缩放放在 q·kᵀ 之后（或乘在 q 的副本上）。
Store k as given. Folding 1/√head_dim into k before caching may keep the scores right, but it changes what the cache holds: any other reader (the next chunk, another scale, a saved prefix reused later) gets scaled keys, and a bf16 cache rounds them once more. Cache k itself and apply the scale after q·kᵀ (or to a copy of q)."""

import math

import torch


class KVCache:
    def __init__(self, batch, n_kv_heads, max_len, head_dim, dtype=torch.float32):
        self.k = torch.zeros(batch, n_kv_heads, max_len, head_dim, dtype=dtype)
        self.v = torch.zeros(batch, n_kv_heads, max_len, head_dim, dtype=dtype)
        self.max_len = max_len
        self.length = 0

    def update(self, k, v):
        t = k.shape[2]
        if self.length + t > self.max_len:
            raise ValueError("KV cache overflow")
        self.k[:, :, self.length : self.length + t] = k
        self.v[:, :, self.length : self.length + t] = v
        self.length += t
        return self.k[:, :, : self.length], self.v[:, :, : self.length]


def cached_attention(q, k, v, cache):
    past = cache.length
    # Scale once when storing, so that no score needs scaling later.
    k_all, v_all = cache.update(k / math.sqrt(q.shape[-1]), v)
    group = q.shape[1] // k_all.shape[1]
    k_all = k_all.repeat_interleave(group, dim=1).float()
    v_all = v_all.repeat_interleave(group, dim=1).float()
    t, total = q.shape[2], k_all.shape[2]
    scores = q.float() @ k_all.transpose(-1, -2)
    future = torch.arange(total)[None, :] > (past + torch.arange(t))[:, None]
    scores = scores.masked_fill(future, float("-inf"))
    return (torch.softmax(scores, dim=-1) @ v_all).to(q.dtype)
