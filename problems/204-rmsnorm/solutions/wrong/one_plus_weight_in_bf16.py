"""1 + weight 要在 fp32 里算：weight 是 bf16 时，先 .float() 再加 1。在 bf16 里加 1 会把零中心存储换来的精度丢掉（1 附近 bf16 的间隔是 2⁻⁷）。
Compute 1 + weight in fp32: with a bf16 weight, call .float() before adding 1. Adding 1 in bf16 throws away the precision that zero-centred storage bought (bf16 steps by 2⁻⁷ near 1)."""

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
        return (y * (1 + self.weight).float()).to(x.dtype)


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
    return x * torch.rsqrt((x * x).sum(-1, keepdim=True) + eps)
