"""你把 silu 写成了 z · exp(z) / (1 + exp(z))：z 大于约 89 时 exp(z) 在 fp32 中溢出，得到 inf / inf = NaN。
请用 F.silu，或写 z * torch.sigmoid(z)（torch.sigmoid 对很大、很小的 z 都是稳定的）。 /
You wrote silu as z · exp(z) / (1 + exp(z)): above about 89, exp(z) overflows fp32 and gives
inf / inf = NaN. Use F.silu, or z * torch.sigmoid(z) (torch.sigmoid is stable at both ends)."""

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
        z = self.gate_proj(x)
        e = torch.exp(z)
        return self.down_proj(z * e / (1 + e) * self.up_proj(x))
