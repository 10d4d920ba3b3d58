"""update 要返回前 length 个位置的视图 k[:, :, :length]，而不是整个缓冲区。你返回了全部 max_len 个位置，后面还没写入的都是 0；注意力再按 k_all 的长度推算位置时，会把这些全零的 key 也算进 softmax（分数为 0 的 key 分走了概率）。返回 self.k[:, :, :self.length]。
update must return views of the first `length` positions, k[:, :, :length], not the whole buffer. You return all max_len positions, and the ones not yet written are zeros; attention that infers positions from k_all's length then lets those zero keys into the softmax (a score of 0 still takes probability). Return self.k[:, :, :self.length]."""

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
        return self.k, self.v


def cached_attention(q, k, v, cache):
    k_all, v_all = cache.update(k, v)
    group = q.shape[1] // k_all.shape[1]
    k_all = k_all.repeat_interleave(group, dim=1).float()
    v_all = v_all.repeat_interleave(group, dim=1).float()
    t, total = q.shape[2], k_all.shape[2]
    past = total - t  # the new tokens are the last t keys
    scores = q.float() @ k_all.transpose(-1, -2) / math.sqrt(q.shape[-1])
    future = torch.arange(total)[None, :] > (past + torch.arange(t))[:, None]
    scores = scores.masked_fill(future, float("-inf"))
    return (torch.softmax(scores, dim=-1) @ v_all).to(q.dtype)
