"""每次 update 之后要把 length 加上 t（这一块的 token 数）。你的 length 一直是 0：每块都写到位置 0 开始、覆盖了之前的 token，解码时模型只看得到当前这一块。写完后执行 self.length += t。
Advance length by t (the chunk's token count) after every update. Yours stays 0: each chunk is written from position 0 over the previous tokens, and a decoded token sees only its own chunk. After writing, do self.length += t."""

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
        end = self.length + t
        if end > self.max_len:
            raise ValueError("KV cache overflow")
        self.k[:, :, self.length : end] = k
        self.v[:, :, self.length : end] = v
        return self.k[:, :, :end], self.v[:, :, :end]


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
