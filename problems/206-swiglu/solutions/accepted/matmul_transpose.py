"""Plain torch.matmul against transposed weights (nn.Linear stores (out, in))."""

import torch
import torch.nn as nn


class SwiGLU(nn.Module):
    def __init__(self, hidden_size, intermediate_size):
        super().__init__()
        if hidden_size <= 0 or intermediate_size <= 0:
            raise ValueError(f"bad sizes {hidden_size}, {intermediate_size}")
        self.gate_proj = nn.Linear(hidden_size, intermediate_size, bias=False)
        self.up_proj = nn.Linear(hidden_size, intermediate_size, bias=False)
        self.down_proj = nn.Linear(intermediate_size, hidden_size, bias=False)

    def forward(self, x):
        if x.shape[-1] != self.down_proj.out_features:
            raise ValueError("the last axis of x must be hidden_size")
        x = x.to(dtype=self.down_proj.weight.dtype)
        gate = torch.matmul(x, self.gate_proj.weight.t())
        up = torch.matmul(x, self.up_proj.weight.t())
        h = gate * torch.sigmoid(gate) * up
        return torch.matmul(h, self.down_proj.weight.t())
