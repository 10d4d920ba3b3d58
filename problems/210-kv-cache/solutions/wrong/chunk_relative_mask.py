"""因果掩码要按绝对位置算：块内第 j 个 query 的位置是 past + j（past = 写入前缓存里已有的 token 数），它能看到位置 0 .. past + j 的所有 key。你用的 triu(ones(t, total), 1) 是以左上角对齐的（F.scaled_dot_product_attention 的 is_causal=True 也是这样），把 query j 当成了位置 j：解码时新 token 只能看到第 0 个 key。改成只保留位置 ≤ past + j 的 key：允许看的布尔掩码是 ones(t, total).tril(diagonal=past)。
The causal mask must use absolute positions: query j of the chunk sits at past + j (past = tokens in the cache before this update) and may see keys 0 .. past + j. triu(ones(t, total), 1) is aligned to the top-left corner (as is is_causal=True in F.scaled_dot_product_attention) and treats query j as position j, so a decoded token sees only key 0. Keep only the keys at positions ≤ past + j: the boolean mask of what may be seen is ones(t, total).tril(diagonal=past)."""

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
    k_all, v_all = cache.update(k, v)
    group = q.shape[1] // k_all.shape[1]
    k_all = k_all.repeat_interleave(group, dim=1).float()
    v_all = v_all.repeat_interleave(group, dim=1).float()
    t, total = q.shape[2], k_all.shape[2]
    scores = q.float() @ k_all.transpose(-1, -2) / math.sqrt(q.shape[-1])
    causal = torch.triu(torch.ones(t, total, dtype=torch.bool), diagonal=1)
    scores = scores.masked_fill(causal, float("-inf"))
    return (torch.softmax(scores, dim=-1) @ v_all).to(q.dtype)
