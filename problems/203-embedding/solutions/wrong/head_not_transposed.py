"""LM head 忘了转置：weight 的形状是 (vocab_size, dim)，每行一个 token，logits = h @ weight.T。vocab_size == dim 时 h @ weight 不会报形状错误，但每个 logit 都算错了。
The LM head is missing its transpose: weight has shape (vocab_size, dim), one row per token, so logits = h @ weight.T. When vocab_size == dim, h @ weight raises no shape error but every logit is wrong."""

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
        return self.weight[ids]

    def logits(self, h):
        return h.float() @ self.weight.float()
