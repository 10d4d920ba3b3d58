"""Calls F.linear with each layer's weight instead of calling the layers."""

import torch.nn as nn
import torch.nn.functional as F


class SwiGLU(nn.Module):
    def __init__(self, hidden_size, intermediate_size):
        super().__init__()
        if hidden_size < 1 or intermediate_size < 1:
            raise ValueError("widths must be positive")
        self.gate_proj = nn.Linear(hidden_size, intermediate_size, bias=False)
        self.up_proj = nn.Linear(hidden_size, intermediate_size, bias=False)
        self.down_proj = nn.Linear(intermediate_size, hidden_size, bias=False)

    def forward(self, x):
        if x.size(-1) != self.gate_proj.weight.shape[1]:
            raise ValueError("wrong last axis")
        x = x.type_as(self.gate_proj.weight)
        gate = F.linear(x, self.gate_proj.weight)
        up = F.linear(x, self.up_proj.weight)
        return F.linear(F.silu(gate) * up, self.down_proj.weight)
