"""RMSNorm 不减均值：直接除以均方根 sqrt(mean(x²) + eps)。减去均值再归一化的是 LayerNorm。
RMSNorm does not subtract the mean: divide by the root mean square sqrt(mean(x²) + eps) directly. Centring first is LayerNorm."""

import torch
import torch.nn as nn
import torch.nn.functional as F


def _norm(x, eps):
    xf = x.float()
    xc = xf - xf.mean(-1, keepdim=True)
    return xc * torch.rsqrt(xc.pow(2).mean(-1, keepdim=True) + eps)


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
