import torch
import torch.nn.functional as F


def causal_conv1d(x, weight, bias=None, initial_state=None):
    """因果深度卷积 + SiLU，一次处理整段序列。
    Causal depthwise conv1d + SiLU over a whole sequence.

    x: (batch, channels, seq)；weight: (channels, kernel)，每个通道一个滤波器；
    bias: (channels,) 或 None；initial_state: (batch, channels, kernel - 1) 或 None（None 表示全零）。
    x: (batch, channels, seq); weight: (channels, kernel), one filter per channel;
    bias: (channels,) or None; initial_state: (batch, channels, kernel - 1) or None (zeros).

    返回 (y, final_state)：y 形状同 x、dtype 同 x；final_state 是补齐后输入流的最后 kernel - 1 个值，
    形状 (batch, channels, kernel - 1)，dtype 同 x。
    Returns (y, final_state): y has x's shape and dtype; final_state holds the last kernel - 1
    values of the padded input stream, shape (batch, channels, kernel - 1), x's dtype.
    """
    # TODO: 在时间维左边接上 kernel - 1 个值（initial_state，没有就用 0）
    # TODO: prepend kernel - 1 values in time (initial_state, or zeros without one)
    # TODO: y[b, c, t] = silu(bias[c] + sum_j weight[c, j] * xpad[b, c, t + j])，在 fp32 中计算
    # TODO: y[b, c, t] = silu(bias[c] + sum_j weight[c, j] * xpad[b, c, t + j]), computed in fp32
    raise NotImplementedError


def causal_conv1d_step(x_t, state, weight, bias=None):
    """解码一步：一个新 token。
    One decoding step for one new token.

    x_t: (batch, channels)；state: (batch, channels, kernel - 1)。
    返回 (y_t, new_state)：y_t 形状 (batch, channels)、dtype 同 x_t；不得原地修改 state。
    x_t: (batch, channels); state: (batch, channels, kernel - 1).
    Returns (y_t, new_state): y_t of shape (batch, channels) in x_t's dtype; do not modify
    `state` in place.
    """
    raise NotImplementedError
