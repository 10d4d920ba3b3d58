import torch
import torch.nn as nn
import torch.nn.functional as F


class SwiGLU(nn.Module):
    """SwiGLU 前馈网络：y = down_proj(silu(gate_proj(x)) * up_proj(x))。
    SwiGLU MLP: y = down_proj(silu(gate_proj(x)) * up_proj(x)).
    """

    def __init__(self, hidden_size, intermediate_size):
        super().__init__()
        # TODO: 创建三个不带偏置的 nn.Linear：gate_proj、up_proj（hidden -> intermediate）
        #       和 down_proj（intermediate -> hidden），名字必须完全一致
        # TODO: create three bias-free nn.Linear layers: gate_proj and up_proj
        #       (hidden -> intermediate) and down_proj (intermediate -> hidden), named exactly so
        raise NotImplementedError

    def forward(self, x):
        # TODO: silu 作用在 gate 分支上，再与 up 分支逐元素相乘，最后经过 down_proj
        # TODO: silu on the gate branch, times the up branch element-wise, then down_proj
        raise NotImplementedError
