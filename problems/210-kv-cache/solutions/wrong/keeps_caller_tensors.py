"""缓存要把 k、v 的值复制进自己预分配的缓冲区。你把调用者传进来的张量对象存进列表、每次再 torch.cat：调用者之后原地修改这些张量（复用内存是常事），缓存里的历史就跟着变了；而且每一步都重新拼接整段历史，既不是预分配，也越解码越慢。预先分配 (batch, n_kv_heads, max_len, head_dim) 的缓冲区，用切片赋值或 copy_ 写入，返回它的切片视图。
The cache must copy the values of k and v into its own preallocated buffers. You keep the caller's tensor objects in a list and torch.cat them each time: when the caller later edits those tensors in place (reusing memory is common), the cache's history changes with them; and every step re-concatenates the whole history, which is neither preallocated nor fast. Allocate (batch, n_kv_heads, max_len, head_dim) buffers up front, write with slice assignment or copy_, and return slices of them."""

import math

import torch


class KVCache:
    def __init__(self, batch, n_kv_heads, max_len, head_dim, dtype=torch.float32):
        self.ks, self.vs = [], []
        self.max_len = max_len
        self.dtype = dtype
        self.length = 0

    def update(self, k, v):
        t = k.shape[2]
        if self.length + t > self.max_len:
            raise ValueError("KV cache overflow")
        self.ks.append(k)
        self.vs.append(v)
        self.length += t
        return torch.cat(self.ks, dim=2).to(self.dtype), torch.cat(self.vs, dim=2).to(self.dtype)


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
