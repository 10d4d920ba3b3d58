"""The mean square through einsum, and type_as for the cast back."""

import torch
import torch.nn as nn
import torch.nn.functional as F


def rms_scale(x, eps):
    xf = x.float()
    ms = torch.einsum("...d,...d->...", xf, xf).unsqueeze(-1) / xf.size(-1)
    return xf, (ms + eps).rsqrt()


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(dim))
        self.eps = eps

    def forward(self, x):
        xf, r = rms_scale(x, self.eps)
        return ((xf * r) * (1 + self.weight.float())).type_as(x)


class GatedRMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x, gate):
        xf, r = rms_scale(x, self.eps)
        return (self.weight * (xf * r) * F.silu(gate.float())).type_as(x)


def l2norm(x, eps=1e-6):
    return x * (torch.einsum("...d,...d->...", x, x).unsqueeze(-1) + eps).rsqrt()
