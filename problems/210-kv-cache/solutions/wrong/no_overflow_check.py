"""写入之前先检查 length + t <= max_len，放不下就抛出 ValueError，并写明还剩几个位置。你没有检查：有时 torch 深处会冒出一个看不懂的形状错误（RuntimeError）；更糟的是缓存正好满了再写 1 个 token 时，长度为 1 的块会广播到一个空切片上，什么也没写、也不报错，length 却超过了 max_len。
Check length + t <= max_len before writing and raise a ValueError that says how many positions are left. Without the check, an overflow sometimes surfaces as a cryptic shape error (RuntimeError) from deep inside torch; worse, one more token into a full cache broadcasts onto an empty slice, writes nothing, raises nothing, and length goes past max_len."""

import math

import torch


class KVCache:
    def __init__(self, batch, n_kv_heads, max_len, head_dim, dtype=torch.float32):
        self.k = torch.zeros(batch, n_kv_heads, max_len, head_dim, dtype=dtype)
        self.v = torch.zeros(batch, n_kv_heads, max_len, head_dim, dtype=dtype)
        self.length = 0

    def update(self, k, v):
        t = k.shape[2]
        self.k[:, :, self.length : self.length + t] = k
        self.v[:, :, self.length : self.length + t] = v
        self.length += t
        return self.k[:, :, : self.length], self.v[:, :, : self.length]


def cached_attention(q, k, v, cache):
    past = cache.length
    k_all, v_all = cache.update(k, v)
    group = q.shape[1] // k_all.shape[1]
    k_all = k_all.repeat_interleave(group, dim=1).float()
    v_all = v_all.repeat_interleave(group, dim=1).float()
    t, total = q.shape[2], k_all.shape[2]
    scores = q.float() @ k_all.transpose(-1, -2) / math.sqrt(q.shape[-1])
    future = torch.arange(total)[None, :] > (past + torch.arange(t))[:, None]
    scores = scores.masked_fill(future, float("-inf"))
    return (torch.softmax(scores, dim=-1) @ v_all).to(q.dtype)
