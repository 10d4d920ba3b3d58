"""LM head 用的是 weight 的一份拷贝（另一个 Parameter），不是 weight 本身。两份参数起点相同，之后各走各的：加载权重只填了 weight，head 还是旧值；weight.grad 里也少了 head 那部分梯度。去掉拷贝，在 logits 里直接用 self.weight（h.float() @ self.weight.float().T）。
Your LM head uses a copy of weight (a second Parameter), not weight itself. The two start equal and then drift apart: loading weights fills only `weight`, the head keeps its old values, and weight.grad misses the head's contribution. Drop the copy and use self.weight directly in logits (h.float() @ self.weight.float().T)."""

import torch
import torch.nn as nn


class TiedEmbedding(nn.Module):
    def __init__(self, vocab_size, dim):
        super().__init__()
        self.vocab_size = vocab_size
        self.weight = nn.Parameter(torch.randn(vocab_size, dim) * 0.02)
        self.lm_head = nn.Parameter(self.weight.detach().clone())  # "tied" at init only

    def embed(self, ids):
        if bool(((ids < 0) | (ids >= self.vocab_size)).any()):
            raise IndexError("token id out of range")
        return self.weight[ids]

    def logits(self, h):
        return h.float() @ self.lm_head.float().T
