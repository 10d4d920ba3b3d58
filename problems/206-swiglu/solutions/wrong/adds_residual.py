"""你在 MLP 里加了残差 x + ...。残差连接属于解码层，不属于 MLP：SwiGLU 只返回
down_proj(silu(gate_proj(x)) * up_proj(x))，由调用它的层再加上 x。 /
You added the residual, x + ..., inside the MLP. The residual belongs to the decoder layer, not to
the MLP: SwiGLU returns down_proj(silu(gate_proj(x)) * up_proj(x)) alone, and the layer adds x."""

import torch.nn as nn
import torch.nn.functional as F


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
        return x + self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))
