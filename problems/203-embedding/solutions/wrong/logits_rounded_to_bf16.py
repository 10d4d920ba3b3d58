"""logits 是在 bf16 里乘出来再 .float() 的：bf16 只有 8 位有效二进制位（约 2～3 位十进制有效数字），20 左右的 logit 步长是 0.125，事后转 fp32 找不回丢掉的位数。先把 h 和 weight 转成 fp32 再相乘：h.float() @ self.weight.float().T。
Your logits are multiplied in bf16 and converted with .float() afterwards: bf16 keeps 8 significant bits, a logit near 20 moves in steps of 0.125, and converting later cannot bring the lost bits back. Convert h and weight to fp32 first, then multiply: h.float() @ self.weight.float().T."""

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
        return (h @ self.weight.T.to(h.dtype)).float()
