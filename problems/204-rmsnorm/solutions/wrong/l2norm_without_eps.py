"""l2norm 要在平方和上加 eps：x · rsqrt(sum(x²) + eps)。不加的话，全零向量会得到 0/0 = NaN。
l2norm needs eps in the sum of squares: x · rsqrt(sum(x²) + eps). Without it a zero vector gives 0/0 = NaN."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(dim))
        self.eps = eps

    def forward(self, x):
        xf = x.float()
        y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)
        return (y * (1 + self.weight.float())).to(x.dtype)


class GatedRMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x, gate):
        xf = x.float()
        y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)
        return (self.weight.float() * y * F.silu(gate.float())).to(x.dtype)


def l2norm(x, eps=1e-6):
    return x / x.norm(dim=-1, keepdim=True)
