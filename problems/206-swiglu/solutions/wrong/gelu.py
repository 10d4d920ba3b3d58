"""你在门控分支上用了 GELU（那是 GeGLU）。SwiGLU 的激活是 silu(z) = z · sigmoid(z)，
请用 F.silu 或自己写 z * torch.sigmoid(z)。 /
You used GELU on the gate branch (that makes GeGLU). SwiGLU's activation is
silu(z) = z · sigmoid(z): use F.silu or write z * torch.sigmoid(z)."""

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
        return self.down_proj(F.gelu(self.gate_proj(x)) * self.up_proj(x))
