"""门的 silu 是在门自己的 dtype（bf16）里算的：应先把 gate 转成 fp32 再算 silu。输出是 bf16 时只差一个 ulp，看不出来；x 是 fp32、门是 bf16 时，输出保留全部精度，silu 被舍入到 8 位有效二进制位（约 2～3 位十进制有效数字）的误差（最多约 0.4%）就留在了结果里。
Your gate's silu is computed in the gate's own dtype (bf16): convert the gate to fp32 before the silu. With a bf16 output that hides within an ulp; with an fp32 x and a bf16 gate the output keeps full precision, and silu rounded to 8 significant bits (up to about 0.4% off) shows in it."""

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
        y = _normalize_fp32(x, self.eps) * self.weight.float() * F.silu(gate).float()
        return y.to(x.dtype)


def l2norm(x: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    return x * torch.rsqrt(x.pow(2).sum(dim=-1, keepdim=True) + eps)
