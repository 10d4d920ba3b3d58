"""embed 把 ids 展平后没有还原形状：输出应为 ids.shape + (dim,)，你返回的是 (ids.numel(), dim)。展平查表后用 .reshape(*ids.shape, dim) 还原。
Your embed flattens ids and never restores the shape: the output must be ids.shape + (dim,), but you return (ids.numel(), dim). After a flat lookup, reshape with .reshape(*ids.shape, dim)."""

import torch
import torch.nn as nn


class TiedEmbedding(nn.Module):
    def __init__(self, vocab_size, dim):
        super().__init__()
        self.vocab_size = vocab_size
        self.weight = nn.Parameter(torch.randn(vocab_size, dim) * 0.02)

    def embed(self, ids):
        flat = ids.reshape(-1)
        if bool(((flat < 0) | (flat >= self.vocab_size)).any()):
            raise IndexError("token id out of range")
        return torch.index_select(self.weight, 0, flat)

    def logits(self, h):
        return h.float() @ self.weight.float().T
