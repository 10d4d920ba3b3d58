"""你把 silu 用在了乘积上：silu(gate * up)。silu 只作用于 gate 分支，然后再乘 up：
silu(gate_proj(x)) * up_proj(x)。 /
You applied silu to the product, silu(gate * up). silu acts on the gate branch alone, and the
result then multiplies up: silu(gate_proj(x)) * up_proj(x)."""

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

    def forward(self, x):
        if x.shape[-1] != self.hidden_size:
            raise ValueError(f"the last axis of x must be {self.hidden_size}")
        x = x.to(self.gate_proj.weight.dtype)
        return self.down_proj(F.silu(self.gate_proj(x) * self.up_proj(x)))
