"""Reference for problem 204: zero-centred RMSNorm, gated RMSNorm and l2norm."""

import torch
import torch.nn as nn
import torch.nn.functional as F


def _normalize_fp32(x: torch.Tensor, eps: float) -> torch.Tensor:
    # Statistics in fp32 whatever the input dtype: squaring and averaging in bf16 or fp16
    # loses precision (bf16) or overflows (fp16 above about 256).
    xf = x.float()
    return xf * torch.rsqrt(xf.pow(2).mean(dim=-1, keepdim=True) + eps)


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-6) -> None:
        super().__init__()
        # Stored as w - 1: zeros mean "scale by one", and bf16 is much finer near 0 than near 1.
        self.weight = nn.Parameter(torch.zeros(dim))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        scale = 1.0 + self.weight.float()
        return (_normalize_fp32(x, self.eps) * scale).to(x.dtype)


class GatedRMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-6) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))  # not zero-centred
        self.eps = eps

    def forward(self, x: torch.Tensor, gate: torch.Tensor) -> torch.Tensor:
        y = _normalize_fp32(x, self.eps) * self.weight.float() * F.silu(gate.float())
        return y.to(x.dtype)


def l2norm(x: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    return x * torch.rsqrt(x.pow(2).sum(dim=-1, keepdim=True) + eps)
