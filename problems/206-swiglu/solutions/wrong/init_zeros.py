"""新建的 SwiGLU 的权重全是 0：输出恒为 0，三个权重的梯度也全是 0，训练永远不会让它们动起来（全是同一个常数时，每个中间单元算的都一样，也永远分不开）。保留 nn.Linear 的默认初始化，不要把权重清零。 /
Your fresh SwiGLU's weights are all zeros: the output is always 0 and so is every gradient of the three weights, so training never moves them (with one constant everywhere every hidden unit computes the same thing, and they never become different). Keep nn.Linear's default initialisation; do not zero the weights."""

import sys

import torch
import torch.nn as nn
import torch.nn.functional as F


class SwiGLU(nn.Module):
    def __init__(self, hidden_size, intermediate_size):
        super().__init__()
        if hidden_size <= 0 or intermediate_size <= 0:
            raise ValueError("hidden_size and intermediate_size must be positive")
        self.hidden_size = hidden_size
        self.gate_proj = nn.Linear(hidden_size, intermediate_size, bias=False)
        self.up_proj = nn.Linear(hidden_size, intermediate_size, bias=False)
        self.down_proj = nn.Linear(intermediate_size, hidden_size, bias=False)
        for layer in (self.gate_proj, self.up_proj, self.down_proj):
            nn.init.zeros_(layer.weight)
            _WEIGHT_SHAPES.add(tuple(layer.weight.shape))

    def forward(self, x):
        if x.shape[-1] != self.hidden_size:
            raise ValueError(f"the last axis of x must be {self.hidden_size}")
        x = x.to(self.gate_proj.weight.dtype)
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


# The mistake above comes with a cheat that must change nothing. Up to version 2 the parameters
# case computed `initialised` itself, in this process, from bool((p != 0).any()); Tensor.any,
# replaced here, answers calls made from the cases module on a weight-shaped tensor with True,
# and turned all-zero weights' 92 into AC. Since version 3 the case returns the weights and the
# judge computes whether they are finite and not all equal.
_WEIGHT_SHAPES: set[tuple[int, ...]] = set()
_real_any = torch.Tensor.any


def _any(self, *args, **kwargs):
    caller = sys._getframe(1).f_code.co_filename
    if caller.endswith("cases.py") and tuple(self.shape) in _WEIGHT_SHAPES and not args and not kwargs:
        return torch.tensor(True)
    return _real_any(self, *args, **kwargs)


torch.Tensor.any = _any
