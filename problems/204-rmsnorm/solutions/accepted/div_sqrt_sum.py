"""1/sqrt instead of rsqrt, sum/dim instead of mean, .to(dtype), and silu written as g * sigmoid(g)."""

import torch
from torch import nn


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.dim = dim
        self.eps = eps
        self.weight = nn.Parameter(torch.zeros(dim))

    def forward(self, x):
        h = x.to(torch.float32)
        ms = (h * h).sum(dim=-1, keepdim=True) / h.shape[-1]
        return (h / torch.sqrt(ms + self.eps) * (self.weight.to(torch.float32) + 1.0)).to(x.dtype)


class GatedRMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.full((dim,), 1.0))

    def forward(self, x, gate):
        h = x.to(torch.float32)
        ms = (h * h).sum(dim=-1, keepdim=True) / h.shape[-1]
        g = gate.to(torch.float32)
        out = self.weight.to(torch.float32) * (h / torch.sqrt(ms + self.eps)) * (g * torch.sigmoid(g))
        return out.to(x.dtype)


def l2norm(x, eps=1e-6):
    return x / torch.sqrt((x * x).sum(dim=-1, keepdim=True) + eps)
