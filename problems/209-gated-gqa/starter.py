import torch
import torch.nn as nn

# 零件：你在第 204、205、208 题里的解答
# Parts: your solutions to problems 204, 205 and 208
from qwen.norm import RMSNorm
from qwen.rope import apply_rope
from qwen.sdpa import attention


class GatedAttention(nn.Module):
    """Qwen3.5 的全注意力层。
    Qwen3.5's full-attention layer.

    参数（名字必须一致，都没有偏置）：
    Parameters (exact names, no biases):
      q_proj: dim -> n_heads * head_dim * 2   每个头：前 head_dim 个是查询，后 head_dim 个是门
                                              per head: the first head_dim are the query, the next head_dim the gate
      k_proj, v_proj: dim -> n_kv_heads * head_dim
      o_proj: n_heads * head_dim -> dim
      q_norm, k_norm: RMSNorm(head_dim, eps)  按头归一化
                                              applied per head
    """

    def __init__(self, dim, n_heads, n_kv_heads, head_dim, eps=1e-6):
        super().__init__()
        # TODO: 按上面的名字和形状创建 q_proj、k_proj、v_proj、o_proj、q_norm、k_norm
        # TODO: create q_proj, k_proj, v_proj, o_proj, q_norm, k_norm with the names and shapes above
        raise NotImplementedError

    def forward(self, x, cos, sin):
        """x: (batch, seq, dim)；cos, sin: (seq, rotary_dim)，位置 0..seq-1。
        返回 (batch, seq, dim)，dtype 与 x 相同。

        x: (batch, seq, dim); cos, sin: (seq, rotary_dim), positions 0..seq-1.
        Returns (batch, seq, dim) in x's dtype.
        """
        # TODO: 投影；把 q_proj 的输出 view 成 (batch, seq, n_heads, 2 * head_dim) 再切出查询和门
        # TODO: project; view q_proj's output as (batch, seq, n_heads, 2 * head_dim), then split query and gate
        # TODO: 每个头做 q_norm / k_norm，然后 apply_rope(t, cos, sin, torch.arange(seq))（t 为 (batch, seq, heads, head_dim)）
        # TODO: q_norm / k_norm per head, then apply_rope(t, cos, sin, torch.arange(seq)) (t of shape (batch, seq, heads, head_dim))
        # TODO: attention(q, k, v)（(batch, heads, seq, head_dim)），查询头 h 使用 kv 头 h // (n_heads // n_kv_heads)
        # TODO: attention(q, k, v) ((batch, heads, seq, head_dim)), query head h using kv head h // (n_heads // n_kv_heads)
        # TODO: 乘 sigmoid(gate)，再过 o_proj
        # TODO: multiply by sigmoid(gate), then apply o_proj
        raise NotImplementedError
