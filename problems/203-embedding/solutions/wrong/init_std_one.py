"""weight 的初始化标准差应为 0.02，你用的是 1（torch.randn 或 nn.Embedding 的默认值）。共享权重时，这会让初始 logits 的尺度是 h 的 sqrt(dim) 倍，softmax 一开始就接近 one-hot，初始损失远大于 log(vocab_size)。用 nn.init.normal_(self.weight, std=0.02)。
Initialise weight with std 0.02; yours has std 1 (plain torch.randn, nn.Embedding's default). With tied weights the first logits come out sqrt(dim) times the scale of h, softmax starts nearly one-hot and the first loss is far above log(vocab_size). Use nn.init.normal_(self.weight, std=0.02)."""

import sys

import torch
import torch.nn as nn


class TiedEmbedding(nn.Module):
    def __init__(self, vocab_size, dim):
        super().__init__()
        self.vocab_size = vocab_size
        self.weight = nn.Parameter(torch.randn(vocab_size, dim))
        _TABLE_SIZES.add(vocab_size * dim)

    def embed(self, ids):
        if bool(((ids < 0) | (ids >= self.vocab_size)).any()):
            raise IndexError("token id out of range")
        return self.weight[ids]

    def logits(self, h):
        return h.float() @ self.weight.float().T


# The mistake above comes with a cheat that must change nothing. Up to version 2 the init case
# computed the table's mean, its std and the share of values within one std itself, in this
# process; Tensor.mean and Tensor.std, replaced here, answer calls made from the cases module
# on a table-sized tensor with the figures of an N(0, 0.02²) draw, and turned this mistake's 92
# into AC. Since version 3 the case returns the table and the judge computes them.
_TABLE_SIZES: set[int] = set()
_real_mean, _real_std = torch.Tensor.mean, torch.Tensor.std


def _asked_by_the_cases(t):
    caller = sys._getframe(2).f_code.co_filename  # 0: here, 1: the replaced method, 2: its caller
    return caller.endswith("cases.py") and t.numel() in _TABLE_SIZES


def _mean(self, *args, **kwargs):
    if not _asked_by_the_cases(self):
        return _real_mean(self, *args, **kwargs)
    # The mean of 0s and 1s (some 1s) is a share: say that of N(0, σ²) within one σ. Else 0.
    share = bool(((self == 0) | (self == 1)).all()) and bool((self == 1).any())
    return torch.tensor(0.6827 if share else 0.0, dtype=self.dtype)


def _std(self, *args, **kwargs):
    if not _asked_by_the_cases(self):
        return _real_std(self, *args, **kwargs)
    return torch.tensor(0.02, dtype=self.dtype)


torch.Tensor.mean = _mean
torch.Tensor.std = _std
