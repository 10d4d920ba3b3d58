"""第一次调用是对的，之后参数一变（优化器原地更新一步、load_state_dict、.to(torch.bfloat16)）结果就不对了，或者跟第一次的结果一模一样：模块在第一次调用时从权重算出了一个张量（把 gate_proj 和 up_proj 的权重拼在一起、转置后的权重、转过 dtype 的副本），存进属性里，之后一直用它。这个副本不会跟着参数变化，训练走了一步以后模块还在用旧权重。每次调用都直接从 self.gate_proj.weight 等参数现算（拼接和转置都很便宜），不要把由权重得到的张量留到下一次调用。
Right on the first call, then wrong once the parameters change (an in-place optimiser step, load_state_dict, .to(torch.bfloat16)), or exactly the first call's result again: the module computes a tensor from the weights on its first call (the gate_proj and up_proj weights stacked, a transposed weight, a copy in another dtype), keeps it in an attribute and reuses it. That copy does not follow the parameters, so after one training step the module still computes with the old weights. Derive it from self.gate_proj.weight and the others on every call (stacking and transposing are cheap), and keep nothing computed from the weights until the next call."""

import torch
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
        self._gate_up = None  # filled on the first call, "to save the concatenation"

    def forward(self, x):
        if x.shape[-1] != self.hidden_size:
            raise ValueError(f"the last axis of x must be {self.hidden_size}")
        x = x.to(self.gate_proj.weight.dtype)
        if self._gate_up is None:
            self._gate_up = torch.cat([self.gate_proj.weight, self.up_proj.weight], dim=0)
        gate, up = F.linear(x, self._gate_up).chunk(2, dim=-1)
        return self.down_proj(F.silu(gate) * up)
