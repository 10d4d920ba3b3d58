"""负数 id 没有报错：weight[ids] 会把 -1 当成最后一行（Python 的负下标），越过上界才会报错。把 -1、-100 这类漏进来的 id 悄悄换成表尾的行，比报错难查得多。自己检查两端：(ids < 0) | (ids >= vocab_size) 有任何一个为真就抛出异常。
Negative ids do not raise: weight[ids] reads -1 as the last row (Python's negative indexing) and only complains past the upper end. Silently turning leaked ids such as -1 or -100 into rows from the end of the table is far harder to debug than an error. Check both ends yourself: raise if any of (ids < 0) | (ids >= vocab_size) is true."""

import torch
import torch.nn as nn


class TiedEmbedding(nn.Module):
    def __init__(self, vocab_size, dim):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(vocab_size, dim) * 0.02)

    def embed(self, ids):
        return self.weight[ids]

    def logits(self, h):
        return h.float() @ self.weight.float().T
