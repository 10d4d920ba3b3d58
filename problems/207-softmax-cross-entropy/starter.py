import torch


def softmax(x, dim=-1):
    """沿 dim 的 softmax：exp(x_i) / sum_j exp(x_j)。
    Softmax along `dim`: exp(x_i) / sum_j exp(x_j).
    """
    # TODO: 先转成 fp32，减去沿 dim 的最大值（keepdim=True）再取 exp，然后除以总和
    # TODO: convert to fp32, subtract the maximum along `dim` (keepdim=True) before exp, divide by the sum
    # TODO: 返回与 x 相同的 dtype
    # TODO: return x's dtype
    raise NotImplementedError


def log_softmax(x, dim=-1):
    """沿 dim 的 log_softmax：x_i - log(sum_j exp(x_j))。
    Log_softmax along `dim`: x_i - log(sum_j exp(x_j)).
    """
    # TODO: 在 fp32 中计算 x - max - log(sum(exp(x - max)))，不要写成 log(softmax(x))
    # TODO: compute x - max - log(sum(exp(x - max))) in fp32; do not write log(softmax(x))
    # TODO: 返回与 x 相同的 dtype
    # TODO: return x's dtype
    raise NotImplementedError


def cross_entropy(logits, targets, ignore_index=-100):
    """交叉熵的平均值。
    The mean cross-entropy.

    logits: (N, V) 或 (B, T, V)；targets: (N,) 或 (B, T)，int64。
    logits: (N, V) or (B, T, V); targets: (N,) or (B, T), int64.
    """
    # TODO: 在 fp32 中求最后一维的 log_softmax，取出每个位置目标类别的值，取负
    # TODO: take log_softmax over the last axis in fp32, pick each position's target class, negate
    # TODO: 跳过 targets == ignore_index 的位置；只对参与计算的 token 求平均（一个都没有时为 NaN）
    # TODO: skip positions where targets == ignore_index; average over the counted tokens only (NaN if none)
    # TODO: 返回 fp32 的 0 维张量
    # TODO: return a 0-dim fp32 tensor
    raise NotImplementedError
