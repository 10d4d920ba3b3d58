"""一个缓存单独用时是对的，两个缓存同时存在、交替写入时（模型的每一层各有一个缓存），结果就乱了：两个缓存共用了同一块存储。常见原因：把缓冲区放在类属性上（`class KVCache: buffers = {}`，之后 `self.buffers["k"] = ...` 改的是所有实例共享的那个字典），或者放在模块级的全局变量里，或者用了可变的默认参数。后建的缓存换掉了先建的缓冲区，两层的键和值写进同一个地方、互相覆盖。缓冲区要在 __init__ 里赋给实例自己的属性（`self.k = torch.zeros(...)`）。
Each cache alone is right, but with two caches alive and written in turn (one per layer of the model), the results go wrong: the two share one storage. The usual causes: the buffers live on a class attribute (`class KVCache: buffers = {}`, after which `self.buffers["k"] = ...` edits the one dict every instance shares), in a module-level global, or in a mutable default argument. The cache made later replaces the buffers of the one made before, and both layers' keys and values land in one place, overwriting each other. Assign the buffers to the instance's own attributes in __init__ (`self.k = torch.zeros(...)`)."""

import math

import torch


class KVCache:
    buffers = {}  # noqa: RUF012 (the mistake: a class attribute, one dict for every cache)

    def __init__(self, batch, n_kv_heads, max_len, head_dim, dtype=torch.float32):
        shape = (batch, n_kv_heads, max_len, head_dim)
        self.buffers["k"] = torch.zeros(shape, dtype=dtype)
        self.buffers["v"] = torch.zeros(shape, dtype=dtype)
        self.max_len = max_len
        self.length = 0

    def update(self, k, v):
        t = k.shape[2]
        end = self.length + t
        if end > self.max_len:
            raise ValueError(f"KV cache overflow: {self.length} stored + {t} new > max_len {self.max_len}")
        self.buffers["k"][:, :, self.length : end].copy_(k)
        self.buffers["v"][:, :, self.length : end].copy_(v)
        self.length = end
        return self.buffers["k"][:, :, :end], self.buffers["v"][:, :, :end]


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
