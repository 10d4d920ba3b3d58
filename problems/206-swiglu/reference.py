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
        # x: (..., hidden_size), with any number of leading axes (none included), in the module's
        # dtype. Everything runs in that dtype (bf16 after .to(torch.bfloat16)), as in transformers.
        shape = x.shape
        # The tokens as rows, whatever the leading axes (reshape: x may be a non-contiguous view).
        rows = x.reshape(-1, shape[-1])  # (tokens, hidden_size)
        # nn.Linear stores its weight as (out, in): each layer is rows @ weight.T, read at every call.
        gate = rows @ self.gate_proj.weight.t()  # (tokens, intermediate_size)
        up = rows @ self.up_proj.weight.t()  # (tokens, intermediate_size)
        # The gate branch goes through silu and scales the up branch feature by feature.
        hidden = F.silu(gate) * up
        y = hidden @ self.down_proj.weight.t()  # (tokens, hidden_size)
        return y.reshape(*shape[:-1], y.shape[-1])
