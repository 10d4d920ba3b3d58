import math

import torch
import torch.nn as nn


class RMSNorm(nn.Module):
    """零中心的 RMSNorm（第 204 题）/ zero-centred RMSNorm (problem 204): x / rms(x) * (1 + weight)."""

    def __init__(self, dim, eps=1e-6):
        super().__init__()
        # TODO: weight 形状 (dim,)，初始为 0；统计量用 fp32，输出与输入 dtype 相同
        # TODO: weight of shape (dim,), zeros; statistics in fp32, output in the input's dtype
        raise NotImplementedError

    def forward(self, x):
        raise NotImplementedError


class GatedAttention(nn.Module):
    """Qwen3.5 的全注意力层 / Qwen3.5's full-attention layer.

    参数（名字必须一致，都没有偏置）/ parameters (exact names, no biases):
      q_proj: dim -> n_heads * head_dim * 2   每个头：前 head_dim 个是查询，后 head_dim 个是门
                                              per head: the first head_dim are the query, the next head_dim the gate
      k_proj, v_proj: dim -> n_kv_heads * head_dim
      o_proj: n_heads * head_dim -> dim
      q_norm, k_norm: RMSNorm(head_dim, eps)，按头归一化 / applied per head
    """

    def __init__(self, dim, n_heads, n_kv_heads, head_dim, eps=1e-6):
        super().__init__()
        # TODO: 按上面的名字和形状创建 q_proj、k_proj、v_proj、o_proj、q_norm、k_norm
        # TODO: create q_proj, k_proj, v_proj, o_proj, q_norm, k_norm with the names and shapes above
        raise NotImplementedError

    def forward(self, x, cos, sin):
        """x: (batch, seq, dim)；cos, sin: (seq, rotary_dim)，位置 0..seq-1 / positions 0..seq-1.

        返回 (batch, seq, dim)，dtype 与 x 相同 / returns (batch, seq, dim) in x's dtype.
        """
        # TODO: 投影；把 q_proj 的输出 view 成 (batch, seq, n_heads, 2 * head_dim) 再切出查询和门
        # TODO: project; view q_proj's output as (batch, seq, n_heads, 2 * head_dim), then split query and gate
        # TODO: 每个头做 q_norm / k_norm，然后对前 rotary_dim 个特征做 RoPE
        # TODO: q_norm / k_norm per head, then RoPE on the first rotary_dim features
        # TODO: 因果注意力，查询头 h 使用 kv 头 h // (n_heads // n_kv_heads)
        # TODO: causal attention in which query head h uses kv head h // (n_heads // n_kv_heads)
        # TODO: 乘 sigmoid(gate)，再过 o_proj
        # TODO: multiply by sigmoid(gate), then apply o_proj
        raise NotImplementedError
