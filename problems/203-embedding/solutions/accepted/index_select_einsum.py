"""Rows through index_select on the flattened ids; the head as an einsum over the feature axis."""

import torch
import torch.nn as nn


class TiedEmbedding(nn.Module):
    def __init__(self, vocab_size, dim):
        super().__init__()
        self.vocab_size = vocab_size
        self.weight = nn.Parameter(torch.randn(vocab_size, dim) * 0.02)

    def embed(self, ids):
        bad = (ids < 0) | (ids >= self.vocab_size)
        if bool(bad.any()):
            raise ValueError(f"{int(bad.sum())} token id(s) outside [0, {self.vocab_size})")
        rows = torch.index_select(self.weight, 0, ids.reshape(-1))
        return rows.reshape(*ids.shape, self.weight.shape[1])

    def logits(self, h):
        return torch.einsum("...d,vd->...v", h.to(torch.float32), self.weight.to(torch.float32))
