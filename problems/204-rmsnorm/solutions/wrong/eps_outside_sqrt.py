"""eps 应加在平方根里面：x / sqrt(mean(x²) + eps)。加在外面时，输入很小的向量几乎不被 eps 约束，结果会大很多。
Put eps inside the square root: x / sqrt(mean(x²) + eps). Outside it, tiny inputs are barely held back by eps and come out far too large."""

import torch
import torch.nn as nn
import torch.nn.functional as F


def _norm(x, eps):
    xf = x.float()
    return xf / (xf.pow(2).mean(-1, keepdim=True).sqrt() + eps)


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(dim))
        self.eps = eps

    def forward(self, x):
        return (_norm(x, self.eps) * (1 + self.weight.float())).to(x.dtype)


class GatedRMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x, gate):
        return (self.weight.float() * _norm(x, self.eps) * F.silu(gate.float())).to(x.dtype)


def l2norm(x, eps=1e-6):
    return x * torch.rsqrt((x * x).sum(-1, keepdim=True) + eps)
