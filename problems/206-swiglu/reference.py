"""Reference for problem 206: the SwiGLU feed-forward block of Qwen-style decoders."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class SwiGLU(nn.Module):
    def __init__(self, hidden_size: int, intermediate_size: int) -> None:
        super().__init__()
        # No biases: every Linear in Qwen's MLP is bias-free, and the norm before the block
        # already fixes the scale, so a bias would mostly add parameters.
        self.gate_proj = nn.Linear(hidden_size, intermediate_size, bias=False)
        self.up_proj = nn.Linear(hidden_size, intermediate_size, bias=False)
        self.down_proj = nn.Linear(intermediate_size, hidden_size, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # The gate branch goes through silu and scales the up branch feature by feature.
        # Everything stays in the module's dtype, as in the transformers implementation.
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))
