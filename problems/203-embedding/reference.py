"""Reference for problem 203: a token embedding whose matrix is also the LM head."""

import torch
import torch.nn as nn


class TiedEmbedding(nn.Module):
    def __init__(self, vocab_size: int, dim: int) -> None:
        super().__init__()
        self.vocab_size = vocab_size
        self.dim = dim
        # One matrix, one row per token, fp32. N(0, 0.02²) from torch's global generator.
        table = torch.empty(self.vocab_size, self.dim)
        nn.init.normal_(table, mean=0.0, std=0.02)
        # The only parameter: embed and logits both read this very tensor, so they stay tied.
        self.weight = nn.Parameter(table)

    def embed(self, ids: torch.Tensor) -> torch.Tensor:
        # Plain indexing would wrap negative ids around to the end of the table: check both
        # ends ourselves. An empty ids tensor has no min or max, and nothing to check.
        if ids.numel() > 0:
            lowest = int(ids.min())
            highest = int(ids.max())
            if lowest < 0 or highest >= self.vocab_size:
                raise IndexError(f"token ids must lie in [0, {self.vocab_size}), got {lowest}..{highest}")
        # One row per id, in the order of the flattened ids. Gathering rows copies them
        # exactly, so the output keeps the weight's dtype; its backward adds each row's
        # gradient back into that row (a repeated id collects one gradient per use).
        flat_ids = ids.reshape(-1)
        rows = self.weight[flat_ids]
        # Back to the shape of the ids, with the feature axis last: ids.shape + (dim,).
        return rows.reshape(*ids.shape, self.dim)

    def logits(self, h: torch.Tensor) -> torch.Tensor:
        # The head is the same matrix: logits[..., v] = <h, weight[v]>. Both factors go to
        # fp32 before the product, whatever their dtypes: rounding afterwards is too late.
        leading = h.shape[:-1]
        h32 = h.reshape(-1, self.dim).to(torch.float32)
        w32 = self.weight.to(torch.float32)
        # (tokens, dim) @ (dim, vocab): each row of weight is a token, hence the transpose.
        scores = torch.matmul(h32, w32.transpose(0, 1))
        return scores.reshape(*leading, self.vocab_size)
