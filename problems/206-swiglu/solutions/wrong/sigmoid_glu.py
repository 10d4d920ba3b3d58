"""你用了 sigmoid(gate) 而不是 silu(gate) = gate · sigmoid(gate)：这是最初的 GLU，不是 SwiGLU。
sigmoid 只给出 0 到 1 之间的比例，还要再乘上 gate 本身。 /
You used sigmoid(gate) instead of silu(gate) = gate · sigmoid(gate): that is the original GLU,
not SwiGLU. The sigmoid is only a 0-to-1 factor; multiply it by the gate itself."""

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
        return self.down_proj(torch.sigmoid(self.gate_proj(x)) * self.up_proj(x))
