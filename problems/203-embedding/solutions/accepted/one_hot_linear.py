"""The lookup as a one-hot matrix product (exact: each output sums one row times 1 and zeros);
the head through F.linear, which multiplies by the transposed weight itself."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class TiedEmbedding(nn.Module):
    def __init__(self, vocab_size, dim):
        super().__init__()
        self.vocab_size = vocab_size
        self.weight = nn.Parameter(torch.zeros(vocab_size, dim))
        with torch.no_grad():
            self.weight.normal_(0.0, 0.02)

    def embed(self, ids):
        # one_hot itself rejects negative ids and ids >= num_classes.
        one_hot = F.one_hot(ids, num_classes=self.vocab_size).to(self.weight.dtype)
        return one_hot @ self.weight

    def logits(self, h):
        return F.linear(h.float(), self.weight.float())
