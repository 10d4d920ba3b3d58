"""前向是对的，梯度却是 NaN：你把掩码做成 0 / -inf 的偏置加到分数上，整行 -inf 的 softmax 先产生 NaN，nan_to_num 只在前向把它换成了 0。反向传播时 softmax 的梯度仍要乘那一行的 NaN 概率，而加法会把梯度原样传回分数，NaN 就流进了 q 和 k 的梯度（对 k 来说是整个 batch 元素）。要在 0/0 发生之前避开它：把 -inf 的行最大值换成 0、在分母为 0 的地方除以 1，或者先给空行填上有限的分数、最后再把输出置 0。
The forward pass is right, the gradients are NaN: you add a 0 / -inf bias to the scores, the softmax of an all -inf row produces NaN, and nan_to_num replaces it with 0 in the forward pass only. In backward, softmax's gradient still multiplies by that row's NaN probabilities, and the addition hands the gradient straight back to the scores, so NaN flows into the gradients of q and k (for k, across the whole batch element). Avoid 0/0 before it happens: use 0 for a -inf row maximum and divide by 1 where the sum is 0, or give empty rows finite scores and zero their output at the end."""

import math

import torch


def attention(q, k, v, padding_mask=None):
    seq, head_dim = q.shape[-2], q.shape[-1]
    scores = q.float() @ k.float().transpose(-2, -1) / math.sqrt(head_dim)
    allowed = torch.ones(seq, seq, dtype=torch.bool).tril()
    if padding_mask is not None:
        allowed = allowed & padding_mask[:, None, None, :]
    bias = torch.zeros(allowed.shape).masked_fill(~allowed, float("-inf"))
    p = torch.softmax(scores + bias, dim=-1)
    p = torch.nan_to_num(p, nan=0.0)
    return (p @ v.float()).to(q.dtype)
