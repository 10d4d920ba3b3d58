"""embed 的输出应与 weight 的 dtype 相同：weight 是 bf16 时，查出来的行也是 bf16。你在 fp32 里乘了 one-hot 却没有转回去。查表只是复制行，不需要换 dtype；用 weight[ids]，或者把 one-hot 转成 weight.dtype 再乘。
embed must return weight's dtype: with a bf16 weight, the rows come back as bf16. You multiply by a one-hot in fp32 and never convert back. A lookup only copies rows and needs no cast: use weight[ids], or make the one-hot weight.dtype before multiplying."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class TiedEmbedding(nn.Module):
    def __init__(self, vocab_size, dim):
        super().__init__()
        self.vocab_size = vocab_size
        self.weight = nn.Parameter(torch.randn(vocab_size, dim) * 0.02)

    def embed(self, ids):
        return F.one_hot(ids, self.vocab_size).float() @ self.weight.float()

    def logits(self, h):
        return h.float() @ self.weight.float().T
