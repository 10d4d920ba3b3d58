"""缓冲区要按参数 dtype 分配：torch.zeros(..., dtype=dtype)。你忽略了 dtype，缓存总是 fp32：要求 bf16 缓存时占了两倍内存（长上下文里 KV 缓存往往比权重还大），返回的 k_all、v_all 也不是 bf16。写入时 copy_ 或切片赋值会自动把 k、v 转成缓存的 dtype。
Allocate the buffers in the `dtype` argument: torch.zeros(..., dtype=dtype). You ignore it and the cache is always fp32: a bf16 cache takes twice the memory (at long context the KV cache can outgrow the weights) and k_all, v_all come back as fp32. copy_ or slice assignment converts k and v to the cache's dtype as they are written."""

import math

import torch


class KVCache:
    def __init__(self, batch, n_kv_heads, max_len, head_dim, dtype=torch.float32):
        self.k = torch.zeros(batch, n_kv_heads, max_len, head_dim)
        self.v = torch.zeros(batch, n_kv_heads, max_len, head_dim)
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
    k_all = k_all.repeat_interleave(group, dim=1).float()
    v_all = v_all.repeat_interleave(group, dim=1).float()
    t, total = q.shape[2], k_all.shape[2]
    scores = q.float() @ k_all.transpose(-1, -2) / math.sqrt(q.shape[-1])
    future = torch.arange(total)[None, :] > (past + torch.arange(t))[:, None]
    scores = scores.masked_fill(future, float("-inf"))
    return (torch.softmax(scores, dim=-1) @ v_all).to(q.dtype)
