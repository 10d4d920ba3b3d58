import torch
import torch.nn as nn
import torch.nn.functional as F

# 零件：你在第 204、211、212 题里的解答
# Parts: your solutions to problems 204, 211 and 212
from qwen.conv import causal_conv1d, causal_conv1d_step
from qwen.delta_rule import gated_delta_rule
from qwen.norm import GatedRMSNorm


class GatedDeltaNet(nn.Module):
    """Qwen3.5 的线性注意力层。
    Qwen3.5's linear-attention layer.

    参数（名字和形状必须与 transformers 的 checkpoint 一致，都没有偏置）：
    Parameters (names and shapes as in transformers' checkpoints, no biases):
      in_proj_qkv: hidden_size -> 2 * key_dim + value_dim   输出顺序 q | k | v
                                                            outputs ordered q | k | v
      in_proj_z:   hidden_size -> value_dim                 门
                                                            the gate
      in_proj_b:   hidden_size -> num_v_heads               beta = sigmoid(b)
      in_proj_a:   hidden_size -> num_v_heads               g = -exp(A_log) * softplus(a + dt_bias)
      conv1d:      nn.Conv1d，深度卷积、无偏置，weight 形状 (conv_dim, 1, K)
                   nn.Conv1d, depthwise, no bias, weight of shape (conv_dim, 1, K)
      dt_bias:     (num_v_heads,)，初始为 1
                   (num_v_heads,), ones at first
      A_log:       (num_v_heads,)，初始为 0
                   (num_v_heads,), zeros at first
      norm:        GatedRMSNorm(head_v_dim, eps)，按 value 头
                   GatedRMSNorm(head_v_dim, eps), per value head
      out_proj:    value_dim -> hidden_size
    其中 key_dim = num_k_heads * head_k_dim，value_dim = num_v_heads * head_v_dim，conv_dim = 2 * key_dim + value_dim。
    where key_dim = num_k_heads * head_k_dim, value_dim = num_v_heads * head_v_dim, conv_dim = 2 * key_dim + value_dim.
    """

    def __init__(self, hidden_size, num_k_heads, num_v_heads, head_k_dim, head_v_dim, conv_kernel_size=4, eps=1e-6):
        super().__init__()
        # TODO: num_v_heads 不是 num_k_heads 的倍数时抛出 ValueError
        # TODO: raise ValueError when num_v_heads is not a multiple of num_k_heads
        # TODO: 按上面的名字和形状创建参数与子模块
        # TODO: create the parameters and submodules with the names and shapes above
        raise NotImplementedError

    def zero_state(self, batch_size):
        """序列开头的状态：(conv_state, recurrent_state)。
        conv_state: (batch, conv_dim, K-1)，dtype 与权重相同；
        recurrent_state: (batch, num_v_heads, head_k_dim, head_v_dim)，fp32。都是零。

        The state at the start of a sequence: (conv_state, recurrent_state).
        conv_state: (batch, conv_dim, K-1) in the weights' dtype;
        recurrent_state: (batch, num_v_heads, head_k_dim, head_v_dim), fp32. All zeros.
        """
        raise NotImplementedError

    def forward(self, x, state=None):
        """x: (batch, seq, hidden_size)，seq >= 1。

        state 为 None：从零状态处理整个序列，只返回 y (batch, seq, hidden_size)。
        state 为 (conv_state, recurrent_state)：从它接着算，返回 (y, new_state)；不修改传入的 state。
        x: (batch, seq, hidden_size), seq >= 1.
        state None: the whole sequence from the zero state; returns y (batch, seq, hidden_size) only.
        state (conv_state, recurrent_state): continues from it; returns (y, new_state); the state passed in is left alone.
        """
        # TODO: in_proj_qkv -> (batch, conv_dim, seq) -> 因果卷积 + SiLU（带 conv_state）
        # TODO: in_proj_qkv -> (batch, conv_dim, seq) -> causal conv + SiLU (with conv_state)
        # TODO: 切成 q | k | v 并分头；key 头用 repeat_interleave 扩展到 num_v_heads 个
        # TODO: split q | k | v into heads; expand the key heads to num_v_heads with repeat_interleave
        # TODO: beta = sigmoid(b)，g = -exp(A_log) * softplus(a + dt_bias)（fp32）
        # TODO: beta = sigmoid(b), g = -exp(A_log) * softplus(a + dt_bias) (fp32)
        # TODO: gated_delta_rule（带 recurrent_state）
        # TODO: gated_delta_rule (with recurrent_state)
        # TODO: 每个 value 头：norm(o, z)，再 out_proj
        # TODO: per value head: norm(o, z), then out_proj
        raise NotImplementedError
