"""Reference for problem 203: a token embedding whose matrix is also the LM head."""

import torch
import torch.nn as nn


class TiedEmbedding(nn.Module):
    def __init__(self, vocab_size: int, dim: int) -> None:
        super().__init__()
        self.vocab_size = vocab_size
        self.dim = dim
        # One matrix, one row per token. N(0, 0.02²) from torch's global generator.
        self.weight = nn.Parameter(torch.empty(vocab_size, dim))
        nn.init.normal_(self.weight, mean=0.0, std=0.02)

    def embed(self, ids: torch.Tensor) -> torch.Tensor:
        # Plain indexing would wrap negative ids around to the end of the table: check both ends.
        if ids.numel() and (int(ids.min()) < 0 or int(ids.max()) >= self.vocab_size):
            raise IndexError(f"token ids must lie in [0, {self.vocab_size})")
        # Gathering rows copies them exactly: the output has the weight's dtype.
        return self.weight[ids]

    def logits(self, h: torch.Tensor) -> torch.Tensor:
        # The head is the same matrix: logits[..., v] = <h, weight[v]>, in fp32 whatever the inputs.
        return h.float() @ self.weight.float().T
