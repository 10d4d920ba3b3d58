"""新的一块要写到位置 length .. length+t-1，而不是 0 .. t-1。你每次都从位置 0 开始写：length 虽然在增长，但之前的 token 被覆盖，后面的位置一直是 0。写成 self.k[:, :, self.length : self.length + t] = k（v 同理），再增加 length。
A new chunk goes to positions length .. length+t-1, not 0 .. t-1. You always write from position 0: length grows, but earlier tokens are overwritten and the later positions stay zero. Write self.k[:, :, self.length : self.length + t] = k (and the same for v), then advance length."""

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
        self.k[:, :, :t] = k
        self.v[:, :, :t] = v
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
