"""Reference for problem 206: the SwiGLU feed-forward block of Qwen-style decoders."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class SwiGLU(nn.Module):
    def __init__(self, hidden_size: int, intermediate_size: int) -> None:
        super().__init__()
        # nn.Linear accepts a width of 0 and builds an empty layer (the block would then
        # output zeros), so a bad config is refused here with a clear error.
        if hidden_size <= 0 or intermediate_size <= 0:
            raise ValueError("hidden_size and intermediate_size must be positive")
        self.hidden_size = hidden_size
        # No biases: every Linear in Qwen's MLP is bias-free, and the norm before the block
        # already fixes the scale, so a bias would mostly add parameters.
        self.gate_proj = nn.Linear(hidden_size, intermediate_size, bias=False)
        self.up_proj = nn.Linear(hidden_size, intermediate_size, bias=False)
        self.down_proj = nn.Linear(intermediate_size, hidden_size, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # x: (..., hidden_size), with any number of leading axes (none included).
        if x.shape[-1] != self.hidden_size:
            raise ValueError(f"the last axis of x must be hidden_size={self.hidden_size}, got {x.shape[-1]}")
        # Everything runs in the module's own dtype (bf16 after .to(torch.bfloat16)), as in the
        # transformers implementation; an input of another dtype is converted to it first.
        x = x.to(self.gate_proj.weight.dtype)
        gate = self.gate_proj(x)  # (..., intermediate_size)
        up = self.up_proj(x)  # (..., intermediate_size)
        # The gate branch goes through silu and scales the up branch feature by feature.
        hidden = F.silu(gate) * up
        return self.down_proj(hidden)  # (..., hidden_size)
