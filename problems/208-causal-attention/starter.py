import math

import torch


def attention(q, k, v, padding_mask=None):
    """带填充掩码的因果缩放点积注意力。
    Causal scaled dot-product attention with a padding mask.

    q, k, v: (batch, heads, seq, head_dim)，dtype 相同（fp32 或 bf16）。
    padding_mask: None，或 (batch, seq) 的 bool 张量，True 表示真实 token；它屏蔽的是键。
    返回 (batch, heads, seq, head_dim)，dtype 与 q 相同；没有任何可见键的行输出 0。

    q, k, v: (batch, heads, seq, head_dim), all of one dtype (fp32 or bf16).
    padding_mask: None, or a (batch, seq) bool tensor, True = a real token; it masks KEYS.
    Returns (batch, heads, seq, head_dim) in q's dtype; a row with no visible key outputs 0.
    """
    # TODO: 转成 fp32，分数 = q @ k^T / sqrt(head_dim)
    # TODO: convert to fp32; scores = q @ k^T / sqrt(head_dim)
    # TODO: 允许的键：j <= i（因果），且 padding_mask[b, j] 为 True；其余填 -inf
    # TODO: allowed keys: j <= i (causal) and padding_mask[b, j] is True; fill the rest with -inf
    # TODO: 在键那一维上做数值稳定的 softmax；没有可见键的行得到 0，不能是 NaN
    # TODO: a stable softmax over the keys; a row with no visible key gives 0, never NaN
    # TODO: 权重乘 v（仍在 fp32 中），最后转回 q 的 dtype；不要原地修改输入
    # TODO: multiply the weights by v (still in fp32), then return q's dtype; do not modify the inputs
    raise NotImplementedError
