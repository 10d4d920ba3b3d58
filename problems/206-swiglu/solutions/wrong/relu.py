"""你在门控分支上用了 ReLU（那是 ReGLU）。silu 在负半轴不是 0：silu(-1) ≈ -0.27，
请用 silu(z) = z · sigmoid(z)。 /
You used ReLU on the gate branch (that makes ReGLU). silu is not zero for negative inputs:
silu(-1) ≈ -0.27. Use silu(z) = z · sigmoid(z)."""

import torch
import torch.nn as nn


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
        return self.down_proj(torch.relu(self.gate_proj(x)) * self.up_proj(x))
