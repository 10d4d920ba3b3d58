"""weight 的初始化标准差应为 0.02，你用的是 1（torch.randn 或 nn.Embedding 的默认值）。共享权重时，这会让初始 logits 的尺度是 h 的 sqrt(dim) 倍，softmax 一开始就接近 one-hot，初始损失远大于 log(vocab_size)。用 nn.init.normal_(self.weight, std=0.02)。
Initialise weight with std 0.02; yours has std 1 (plain torch.randn, nn.Embedding's default). With tied weights the first logits come out sqrt(dim) times the scale of h, softmax starts nearly one-hot and the first loss is far above log(vocab_size). Use nn.init.normal_(self.weight, std=0.02)."""

import torch
import torch.nn as nn


class TiedEmbedding(nn.Module):
    def __init__(self, vocab_size, dim):
        super().__init__()
        self.vocab_size = vocab_size
        self.weight = nn.Parameter(torch.randn(vocab_size, dim))

    def embed(self, ids):
        if bool(((ids < 0) | (ids >= self.vocab_size)).any()):
            raise IndexError("token id out of range")
        return self.weight[ids]

    def logits(self, h):
        return h.float() @ self.weight.float().T
