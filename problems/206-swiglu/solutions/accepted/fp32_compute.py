"""Computes everything in fp32 and rounds once at the end: the farthest a correct bf16 answer drifts."""

import torch.nn as nn
import torch.nn.functional as F


class SwiGLU(nn.Module):
    def __init__(self, hidden_size, intermediate_size):
        super().__init__()
        if min(hidden_size, intermediate_size) < 1:
            raise ValueError("both widths must be at least 1")
        self.gate_proj = nn.Linear(hidden_size, intermediate_size, bias=False)
        self.up_proj = nn.Linear(hidden_size, intermediate_size, bias=False)
        self.down_proj = nn.Linear(intermediate_size, hidden_size, bias=False)

    def forward(self, x):
        if x.shape[-1] != self.gate_proj.in_features:
            raise ValueError("x does not end in hidden_size")
        xf = x.float()
        gate = F.linear(xf, self.gate_proj.weight.float())
        up = F.linear(xf, self.up_proj.weight.float())
        y = F.linear(F.silu(gate) * up, self.down_proj.weight.float())
        return y.to(self.down_proj.weight.dtype)
