"""第一次调用是对的，参数原地更新（优化器的一步、load_state_dict）或用 .to() 转换 dtype 之后的调用还是旧的结果：你在第一次调用时把 1 + weight（或 weight.float()）算好存了起来，之后一直用这份副本。常见的写法是 `if self._scale is None: self._scale = 1 + self.weight.float()`，或者在 __init__ 里就算好。它不会跟着参数变：训练时这一层的更新、加载进来的权重都被悄悄忽略。每次 forward 都从 self.weight 现算，这一步很便宜。
Right on the first call, and still the old result after the parameters are updated in place (an optimiser step, load_state_dict) or converted with .to(): you worked out 1 + weight (or weight.float()) on the first call, stored it, and keep using that copy. The usual forms are `if self._scale is None: self._scale = 1 + self.weight.float()`, or computing it in __init__. It does not follow the parameter: the layer silently ignores its training updates and any checkpoint loaded into it. Compute it from self.weight in every forward; it is cheap."""

import torch
import torch.nn as nn
import torch.nn.functional as F


def _normalize(x, eps):
    xf = x.float()
    return xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(dim))
        self.eps = eps
        self._scale = None

    def forward(self, x):
        if self._scale is None:
            self._scale = 1.0 + self.weight.float()
        return (_normalize(x, self.eps) * self._scale).to(x.dtype)


class GatedRMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps
        self._weight32 = None

    def forward(self, x, gate):
        if self._weight32 is None:
            self._weight32 = self.weight.float()
        y = _normalize(x, self.eps) * self._weight32 * F.silu(gate.float())
        return y.to(x.dtype)


def l2norm(x, eps=1e-6):
    return x * torch.rsqrt(x.pow(2).sum(dim=-1, keepdim=True) + eps)
