"""你忘了激活函数：gate_proj(x) * up_proj(x) 只是一个双线性函数。gate 分支要先经过 silu，
才能决定 up 分支的每个特征放行多少。 /
You left out the activation: gate_proj(x) * up_proj(x) is merely bilinear. The gate branch must
go through silu before it decides how much of each up feature passes."""

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
        return self.down_proj(self.gate_proj(x) * self.up_proj(x))
