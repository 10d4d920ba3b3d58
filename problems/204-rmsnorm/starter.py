import torch
import torch.nn as nn
import torch.nn.functional as F


class RMSNorm(nn.Module):
    """零中心的 RMSNorm：y = x / rms(x) * (1 + weight)。
    Zero-centred RMSNorm: y = x / rms(x) * (1 + weight).
    """

    def __init__(self, dim, eps=1e-6):
        super().__init__()
        # TODO: 创建参数 weight（形状 (dim,)，初始化为 0）并保存 eps
        # TODO: create parameter `weight` (shape (dim,), initialised to zeros) and keep eps
        raise NotImplementedError

    def forward(self, x):
        # TODO: 统计量用 fp32 计算，输出与 x 的 dtype 相同
        # TODO: statistics in fp32; output in x's dtype
        raise NotImplementedError


class GatedRMSNorm(nn.Module):
    """带门的 RMSNorm：y = weight * x / rms(x) * silu(gate)。
    Gated RMSNorm: y = weight * x / rms(x) * silu(gate).
    """

    def __init__(self, dim, eps=1e-6):
        super().__init__()
        # TODO: 创建参数 weight（形状 (dim,)，初始化为 1）并保存 eps
        # TODO: create parameter `weight` (shape (dim,), initialised to ones) and keep eps
        raise NotImplementedError

    def forward(self, x, gate):
        raise NotImplementedError


def l2norm(x, eps=1e-6):
    """把最后一维缩放到单位长度。
    Scale the last axis to unit length.
    """
    raise NotImplementedError
