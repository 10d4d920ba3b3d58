"""你把 silu 用在了 up_proj 的输出上（或者把 gate_proj 和 up_proj 的角色弄反了）。门控分支是 gate_proj：
应为 down_proj(silu(gate_proj(x)) * up_proj(x))，up_proj 的输出不经过激活。 /
You applied silu to the up_proj output (or swapped the roles of gate_proj and up_proj). The gate
branch is gate_proj: it should be down_proj(silu(gate_proj(x)) * up_proj(x)), with up_proj left linear."""

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
        return self.down_proj(self.gate_proj(x) * F.silu(self.up_proj(x)))
