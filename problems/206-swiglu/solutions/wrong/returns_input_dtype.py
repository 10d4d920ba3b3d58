"""你把输出转回了输入 x 的 dtype。RMSNorm、RoPE 返回输入的 dtype，但 SwiGLU 是带权重的模块：它在模块自己的 dtype 中计算，也返回模块的 dtype。输入的 dtype 与模块不同时（例如 fp32 的残差流进入 bf16 的 MLP），先把 x 转成权重的 dtype，结果就保持这个 dtype，不要再 .to(x.dtype)。
You convert the output back to the input's dtype. RMSNorm and RoPE return their input's dtype, but SwiGLU is a module with weights: it computes in its own dtype and returns that dtype. When the input has another dtype (an fp32 residual stream entering a bf16 MLP, say), convert x to the weights' dtype first and keep the result in it; do not call .to(x.dtype) at the end."""

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
        h = x.to(self.gate_proj.weight.dtype)
        y = self.down_proj(F.silu(self.gate_proj(h)) * self.up_proj(h))
        return y.to(x.dtype)  # the input's dtype, not the module's
