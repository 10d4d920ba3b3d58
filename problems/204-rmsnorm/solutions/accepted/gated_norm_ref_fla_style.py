"""Accepted: the style of the torch reference that flash-linear-attention (and mamba's
layernorm_gated) ship next to their fused gated-norm kernels: `rms_norm_ref(x, weight, bias, z,
eps, group_size, norm_before_gate, upcast)`, a plain function the modules call."""

import torch
import torch.nn as nn
import torch.nn.functional as F


def rms_norm_ref(x, weight, bias=None, z=None, eps=1e-6, group_size=None, norm_before_gate=True, upcast=True):
    dtype = x.dtype
    weight = weight.float()
    bias = bias.float() if bias is not None else None
    if upcast:
        x = x.float()
        z = z.float() if z is not None else z
    if z is not None and not norm_before_gate:
        x = x * F.silu(z)
    if group_size is None:
        rstd = 1 / torch.sqrt(x.square().mean(dim=-1, keepdim=True) + eps)
        out = x * rstd * weight
    else:
        # Normalise each group of `group_size` features on its own (one group here: the whole row).
        groups = x.unflatten(-1, (-1, group_size))
        rstd = 1 / torch.sqrt(groups.square().mean(dim=-1, keepdim=True) + eps)
        out = (groups * rstd).flatten(-2) * weight
    if bias is not None:
        out = out + bias
    if z is not None and norm_before_gate:
        out = out * F.silu(z)
    return out.to(dtype)


def l2norm_ref(x, eps=1e-6):
    # FLA's l2norm: x / sqrt(sum(x²) + eps), written with rsqrt, in the input's dtype.
    return x * torch.rsqrt((x * x).sum(dim=-1, keepdim=True) + eps)


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.hidden_size = dim
        self.eps = eps
        self.weight = nn.Parameter(torch.zeros(dim))

    def forward(self, x):
        return rms_norm_ref(x, 1.0 + self.weight.float(), eps=self.eps)


class GatedRMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.hidden_size = dim
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x, gate):
        # Qwen3.5's gated norm normalises first, then gates: norm_before_gate=True.
        return rms_norm_ref(
            x, self.weight, z=gate, eps=self.eps, group_size=self.hidden_size, norm_before_gate=True
        )


def l2norm(x, eps=1e-6):
    return l2norm_ref(x, eps)
