"""One matmul for both input projections: the weights are stacked in forward, names unchanged."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class SwiGLU(nn.Module):
    def __init__(self, hidden_size, intermediate_size):
        super().__init__()
        self.gate_proj = nn.Linear(hidden_size, intermediate_size, bias=False)
        self.up_proj = nn.Linear(hidden_size, intermediate_size, bias=False)
        self.down_proj = nn.Linear(intermediate_size, hidden_size, bias=False)

    def forward(self, x):
        # (2 * intermediate, hidden): gate rows first, then up rows.
        w = torch.cat([self.gate_proj.weight, self.up_proj.weight], dim=0)
        gate, up = F.linear(x, w).chunk(2, dim=-1)
        return self.down_proj(F.silu(gate) * up)
