"""One matmul for both input projections: the weights are stacked in forward, names unchanged."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class SwiGLU(nn.Module):
    def __init__(self, hidden_size, intermediate_size):
        super().__init__()
        if not (hidden_size > 0 and intermediate_size > 0):
            raise ValueError("hidden_size and intermediate_size must be positive")
        self.gate_proj = nn.Linear(hidden_size, intermediate_size, bias=False)
        self.up_proj = nn.Linear(hidden_size, intermediate_size, bias=False)
        self.down_proj = nn.Linear(intermediate_size, hidden_size, bias=False)

    def forward(self, x):
        # (2 * intermediate, hidden): gate rows first, then up rows.
        w = torch.cat([self.gate_proj.weight, self.up_proj.weight], dim=0)
        if x.shape[-1] != w.shape[1]:
            raise ValueError("the last axis of x must be hidden_size")
        gate, up = F.linear(x.to(w.dtype), w).chunk(2, dim=-1)
        return self.down_proj(F.silu(gate) * up)
