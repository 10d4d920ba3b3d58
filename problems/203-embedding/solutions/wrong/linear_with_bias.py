"""LM head 多了一个偏置：nn.Linear 默认 bias=True，共享了 weight 却留下了随机初始化的 bias，每个 logit 都被平移了。Qwen 的 LM head 没有偏置：用 nn.Linear(dim, vocab_size, bias=False)，或者直接算 h @ weight.T。
Your LM head has a bias: nn.Linear defaults to bias=True, so tying the weight still leaves a randomly initialised bias that shifts every logit. Qwen's LM head has no bias: use nn.Linear(dim, vocab_size, bias=False), or just compute h @ weight.T."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class TiedEmbedding(nn.Module):
    def __init__(self, vocab_size, dim):
        super().__init__()
        self.vocab_size = vocab_size
        self.weight = nn.Parameter(torch.randn(vocab_size, dim) * 0.02)
        self.head = nn.Linear(dim, vocab_size)
        self.head.weight = self.weight

    def embed(self, ids):
        if bool(((ids < 0) | (ids >= self.vocab_size)).any()):
            raise IndexError("token id out of range")
        return self.weight[ids]

    def logits(self, h):
        return F.linear(h.float(), self.head.weight.float(), self.head.bias.float())
