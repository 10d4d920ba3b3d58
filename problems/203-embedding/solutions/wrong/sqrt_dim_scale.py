"""embed 把向量乘了 sqrt(dim)。原始 Transformer 和 Gemma 这样做，Qwen 不这样做：查表就是原样返回 weight 的行，不缩放。
Your embed multiplies the vectors by sqrt(dim). The original Transformer and Gemma do that; Qwen does not: the lookup returns the rows of weight as they are, unscaled."""

import math

import torch
import torch.nn as nn


class TiedEmbedding(nn.Module):
    def __init__(self, vocab_size, dim):
        super().__init__()
        self.vocab_size = vocab_size
        self.weight = nn.Parameter(torch.randn(vocab_size, dim) * 0.02)

    def embed(self, ids):
        if bool(((ids < 0) | (ids >= self.vocab_size)).any()):
            raise IndexError("token id out of range")
        return self.weight[ids] * math.sqrt(self.weight.shape[1])

    def logits(self, h):
        return h.float() @ self.weight.float().T
