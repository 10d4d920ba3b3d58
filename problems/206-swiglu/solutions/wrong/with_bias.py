"""你的线性层带了偏置（nn.Linear 默认 bias=True）。Qwen 的 MLP 中三个投影都没有偏置：
请写 nn.Linear(..., bias=False)，模块里只应有 gate_proj.weight、up_proj.weight、down_proj.weight。 /
Your Linear layers have biases (nn.Linear defaults to bias=True). None of the three projections
in Qwen's MLP has one: write nn.Linear(..., bias=False), so that the only parameters are
gate_proj.weight, up_proj.weight and down_proj.weight."""

import torch.nn as nn
import torch.nn.functional as F


class SwiGLU(nn.Module):
    def __init__(self, hidden_size, intermediate_size):
        super().__init__()
        if hidden_size <= 0 or intermediate_size <= 0:
            raise ValueError("hidden_size and intermediate_size must be positive")
        self.hidden_size = hidden_size
        self.gate_proj = nn.Linear(hidden_size, intermediate_size)
        self.up_proj = nn.Linear(hidden_size, intermediate_size)
        self.down_proj = nn.Linear(intermediate_size, hidden_size)

    def forward(self, x):
        if x.shape[-1] != self.hidden_size:
            raise ValueError(f"the last axis of x must be {self.hidden_size}")
        x = x.to(self.gate_proj.weight.dtype)
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))
