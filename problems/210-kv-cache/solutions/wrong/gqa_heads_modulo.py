"""分组查询注意力里，q 头 h 使用 kv 头 h // group（group = n_heads // n_kv_heads），即相邻的 group 个 q 头共用一个 kv 头。你用 repeat 把 kv 头整体重复，得到的是 h % n_kv_heads 的对应关系。改用 repeat_interleave(group, dim=1)，或把 q 变形为 (batch, n_kv_heads, group, t, head_dim) 再计算。
In grouped-query attention query head h reads kv head h // group (group = n_heads // n_kv_heads): neighbouring query heads share a kv head. repeat tiles the kv heads as a block, which pairs head h with kv head h % n_kv_heads. Use repeat_interleave(group, dim=1), or view q as (batch, n_kv_heads, group, t, head_dim)."""

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
    k_all, v_all = cache.update(k, v)
    group = q.shape[1] // k_all.shape[1]
    k_all = k_all.repeat(1, group, 1, 1).float()
    v_all = v_all.repeat(1, group, 1, 1).float()
    t, total = q.shape[2], k_all.shape[2]
    scores = q.float() @ k_all.transpose(-1, -2) / math.sqrt(q.shape[-1])
    future = torch.arange(total)[None, :] > (past + torch.arange(t))[:, None]
    scores = scores.masked_fill(future, float("-inf"))
    return (torch.softmax(scores, dim=-1) @ v_all).to(q.dtype)
