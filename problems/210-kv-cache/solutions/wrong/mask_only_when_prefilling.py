"""单个 token 解码时不需要掩码，这一点没错；但一块多个 token（预填充之后再来的一块）时，掩码必须按绝对位置算：块内第 j 个 query 在位置 past + j，可以看到之前缓存里的全部 key 和本块的前 j+1 个。你的 triu(ones(t, total), 1) 以左上角对齐，让这一块的 query 看不到大部分历史 token。改成只保留位置 ≤ past + j 的 key：允许看的布尔掩码是 ones(t, total).tril(diagonal=past)。
Skipping the mask for a single decoded token is fine, but for a chunk of several tokens after a prefill the mask must use absolute positions: query j of the chunk sits at past + j and sees every cached key plus the first j+1 of the chunk. Your triu(ones(t, total), 1) is aligned to the top-left corner and hides most of the history from the chunk. Keep only the keys at positions ≤ past + j: the boolean mask of what may be seen is ones(t, total).tril(diagonal=past)."""

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
    if t > 1:  # a decoded token may see everything, so only prefill needs a mask
        causal = torch.triu(torch.ones(t, total, dtype=torch.bool), diagonal=1)
        scores = scores.masked_fill(causal, float("-inf"))
    return (torch.softmax(scores, dim=-1) @ v_all).to(q.dtype)
