"""silu written out as z * sigmoid(z)."""

import torch
import torch.nn as nn


class SwiGLU(nn.Module):
    def __init__(self, hidden_size, intermediate_size):
        super().__init__()
        if hidden_size <= 0:
            raise ValueError("hidden_size must be positive")
        if intermediate_size <= 0:
            raise ValueError("intermediate_size must be positive")
        self.gate_proj = nn.Linear(hidden_size, intermediate_size, bias=False)
        self.up_proj = nn.Linear(hidden_size, intermediate_size, bias=False)
        self.down_proj = nn.Linear(intermediate_size, hidden_size, bias=False)

    def forward(self, x):
        if x.shape[-1] != self.up_proj.in_features:
            raise ValueError("the last axis of x must be hidden_size")
        x = x.to(self.up_proj.weight.dtype)
        z = self.gate_proj(x)
        return self.down_proj(z * torch.sigmoid(z) * self.up_proj(x))
