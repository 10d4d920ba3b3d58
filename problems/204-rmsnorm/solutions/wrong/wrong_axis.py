"""归一化要沿最后一维（特征维，dim=-1）进行，每个向量单独算自己的均方根；你沿着别的维度求了均值。
Normalise over the last axis (the features, dim=-1), each vector on its own; you averaged over another axis."""

import torch
import torch.nn as nn
import torch.nn.functional as F


def _norm(x, eps):
    xf = x.float()
    return xf * torch.rsqrt(xf.pow(2).mean(0, keepdim=True) + eps)


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
    return x * torch.rsqrt((x * x).sum(0, keepdim=True) + eps)
