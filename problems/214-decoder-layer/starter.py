import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class RMSNorm(nn.Module):
    """零中心的 RMSNorm（第 204 题）/ zero-centred RMSNorm (problem 204): y = x / rms(x) * (1 + weight)."""

    def __init__(self, dim, eps=1e-6):
        super().__init__()
        # TODO: weight 形状 (dim,)，初始化为 0 / weight of shape (dim,), initialised to zeros
        raise NotImplementedError

    def forward(self, x):
        # TODO: 统计量和 1 + weight 在 fp32 中计算，输出与 x 的 dtype 相同
        # TODO: statistics and 1 + weight in fp32; output in x's dtype
        raise NotImplementedError


class Attention(nn.Module):
    """因果的分组查询注意力（本题不加 RoPE、不加门）/ causal grouped-query attention (no RoPE, no gate here).

    参数 / parameters: q_proj, k_proj, v_proj, o_proj (nn.Linear, bias=False)
    """

    def __init__(self, dim, n_heads, n_kv_heads, head_dim):
        super().__init__()
        raise NotImplementedError

    def forward(self, x):
        # x: (batch, seq, dim) -> (batch, seq, dim)
        raise NotImplementedError


class MLP(nn.Module):
    """SwiGLU（第 206 题）/ SwiGLU (problem 206): down_proj(silu(gate_proj(x)) * up_proj(x))."""

    def __init__(self, dim, hidden):
        super().__init__()
        raise NotImplementedError

    def forward(self, x):
        raise NotImplementedError


class DecoderLayer(nn.Module):
    """预归一化解码层 / a pre-norm decoder layer.

    子模块名必须是 / submodules must be named: input_layernorm, self_attn, post_attention_layernorm, mlp

    forward(x):
        h = x + self_attn(input_layernorm(x))
        return h + mlp(post_attention_layernorm(h))
    """

    def __init__(self, dim, n_heads, n_kv_heads, head_dim, hidden, eps=1e-6):
        super().__init__()
        raise NotImplementedError

    def forward(self, x):
        # x: (batch, seq, dim)，返回同样形状与 dtype / returns the same shape and dtype
        raise NotImplementedError
