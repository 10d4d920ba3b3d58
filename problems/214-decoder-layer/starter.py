import torch
import torch.nn as nn

# 零件：你在第 204、206、208 题里的解答
# Parts: your solutions to problems 204, 206 and 208
from qwen.mlp import SwiGLU
from qwen.norm import RMSNorm
from qwen.sdpa import attention


class Attention(nn.Module):
    """因果的分组查询注意力（本题不加 RoPE、不加门）。
    Causal grouped-query attention (no RoPE, no gate here).

    参数：q_proj, k_proj, v_proj, o_proj (nn.Linear, bias=False)
    Parameters: q_proj, k_proj, v_proj, o_proj (nn.Linear, bias=False)
    """

    def __init__(self, dim, n_heads, n_kv_heads, head_dim):
        super().__init__()
        raise NotImplementedError

    def forward(self, x):
        # x: (batch, seq, dim) -> (batch, seq, dim)
        # TODO: 投影并拆成 (batch, heads, seq, head_dim)；kv 头用 repeat_interleave 展开；attention(q, k, v)
        # TODO: project and split into (batch, heads, seq, head_dim); expand kv heads with repeat_interleave; attention(q, k, v)
        raise NotImplementedError


class DecoderLayer(nn.Module):
    """预归一化解码层。
    A pre-norm decoder layer.

    子模块名必须是：input_layernorm, self_attn, post_attention_layernorm, mlp
    Submodules must be named: input_layernorm, self_attn, post_attention_layernorm, mlp
      input_layernorm, post_attention_layernorm: RMSNorm(dim, eps)
      mlp: SwiGLU(dim, hidden)

    forward(x):
        h = x + self_attn(input_layernorm(x))
        return h + mlp(post_attention_layernorm(h))
    """

    def __init__(self, dim, n_heads, n_kv_heads, head_dim, hidden, eps=1e-6):
        super().__init__()
        raise NotImplementedError

    def forward(self, x):
        # x: (batch, seq, dim)，返回同样形状与 dtype
        # x: (batch, seq, dim); returns the same shape and dtype
        raise NotImplementedError
