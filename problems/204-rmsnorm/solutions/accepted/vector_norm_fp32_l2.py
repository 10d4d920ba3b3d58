"""RMS through torch.linalg.vector_norm, a functional core shared by both modules, l2norm in fp32."""

import torch
import torch.nn.functional as F
from torch import nn


def rms_normalize(x, eps):
    xf = x.float()
    ms = torch.linalg.vector_norm(xf, dim=-1, keepdim=True).square() / xf.shape[-1]
    return xf * torch.rsqrt(ms + eps)


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.register_parameter("weight", nn.Parameter(torch.zeros(dim)))

    def forward(self, x):
        return torch.mul(rms_normalize(x, self.eps), self.weight.float().add(1)).to(dtype=x.dtype)


class GatedRMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x, gate):
        return (rms_normalize(x, self.eps) * F.silu(gate.float()) * self.weight.float()).to(dtype=x.dtype)


def l2norm(x, eps=1e-6):
    xf = x.float()
    return (xf * torch.rsqrt(xf.square().sum(-1, keepdim=True) + eps)).to(x.dtype)
