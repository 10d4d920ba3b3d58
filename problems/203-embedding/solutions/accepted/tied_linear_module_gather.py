"""transformers-style tying: an nn.Linear head whose weight *is* the embedding parameter.
Rows are gathered with torch.gather; the head runs F.linear on fp32 copies."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class TiedEmbedding(nn.Module):
    def __init__(self, vocab_size, dim):
        super().__init__()
        self.vocab_size = vocab_size
        self.dim = dim
        self.weight = nn.Parameter(torch.empty(vocab_size, dim))
        nn.init.normal_(self.weight, std=0.02)
        self.lm_head = nn.Linear(dim, vocab_size, bias=False)
        self.lm_head.weight = self.weight  # the same Parameter object: one tensor, one gradient

    def embed(self, ids):
        if ids.numel() > 0:
            lo, hi = int(ids.min()), int(ids.max())
            if lo < 0 or hi >= self.vocab_size:
                raise IndexError(f"token id {lo if lo < 0 else hi} is not in [0, {self.vocab_size})")
        flat = ids.reshape(-1, 1).expand(-1, self.dim)
        return torch.gather(self.weight, 0, flat).reshape(*ids.shape, self.dim)

    def logits(self, h):
        w = self.lm_head.weight
        return F.linear(h.float(), w.float())
