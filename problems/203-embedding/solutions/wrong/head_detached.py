"""logits 里用了 self.weight.detach()（或 .data），LM head 这一路的梯度被切断了：weight.grad 只剩查表的那部分。共享权重时两处都要参与求导，直接用 self.weight，autograd 会把两部分梯度相加。
Your logits use self.weight.detach() (or .data), which cuts the LM head's gradient: weight.grad holds only the lookup's part. With tied weights both uses must be differentiated: use self.weight itself and autograd adds the two contributions."""

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
        return h.float() @ self.weight.detach().float().T
