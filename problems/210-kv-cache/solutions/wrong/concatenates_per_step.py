"""缓存要一次分配好，update 把新 token 写进缓冲区，返回缓冲区前 length 个位置的视图。你每一步都用 torch.cat 拼出一个新张量：结果的数值一样，但每步都要重新分配并复制全部旧 token（解码 n 步共 O(n²) 次复制），返回的也不再是同一块缓冲区的视图。在构造函数里分配 (batch, n_kv_heads, max_len, head_dim) 的缓冲区，用 self.k[:, :, length:end].copy_(k) 写入。
The cache is allocated once; update writes the new tokens into the buffer and returns views of its first `length` positions. You build a new tensor with torch.cat at every step: the values are the same, but each step allocates again and copies every old token (O(n²) copies over n decoding steps), and what you return is no longer a view of one buffer. Allocate (batch, n_kv_heads, max_len, head_dim) buffers in the constructor and write with self.k[:, :, length:end].copy_(k)."""

import math

import torch


class KVCache:
    def __init__(self, batch, n_kv_heads, max_len, head_dim, dtype=torch.float32):
        self.k = torch.zeros(batch, n_kv_heads, 0, head_dim, dtype=dtype)
        self.v = torch.zeros(batch, n_kv_heads, 0, head_dim, dtype=dtype)
        self.dtype = dtype
        self.max_len = max_len
        self.length = 0

    def update(self, k, v):
        t = k.shape[2]
        if self.length + t > self.max_len:
            raise ValueError("KV cache overflow")
        self.k = torch.cat([self.k, k.to(self.dtype)], dim=2)
        self.v = torch.cat([self.v, v.to(self.dtype)], dim=2)
        self.length += t
        return self.k, self.v


def cached_attention(q, k, v, cache):
    past = cache.length
    k_all, v_all = cache.update(k, v)
    group = q.shape[1] // k_all.shape[1]
    k_all = k_all.repeat_interleave(group, dim=1).float()
    v_all = v_all.repeat_interleave(group, dim=1).float()
    t, total = q.shape[2], k_all.shape[2]
    scores = q.float() @ k_all.transpose(-1, -2) / math.sqrt(q.shape[-1])
    q_pos = past + torch.arange(t).unsqueeze(1)
    k_pos = torch.arange(total).unsqueeze(0)
    scores = scores.masked_fill(k_pos > q_pos, float("-inf"))
    return (torch.softmax(scores, dim=-1) @ v_all).to(q.dtype)
