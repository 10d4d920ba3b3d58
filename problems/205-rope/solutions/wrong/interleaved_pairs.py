"""你把相邻的两个特征 (x0, x1)、(x2, x3)…… 当成一对来旋转，这是原论文的交错配对写法。本题（与 Qwen、Llama 一样）采用"前后两半"配对：特征 i 与特征 i + d/2 组成一对，即 rotate_half(x) = cat([-x2, x1])，其中 x1、x2 是最后一维的前半和后半。两种写法都是合法的 RoPE，但权重是按其中一种训练的，换一种就对不上。
You rotate adjacent features (x0, x1), (x2, x3), ... as pairs: the interleaved layout of the original paper. This problem, like Qwen and Llama, pairs feature i with feature i + d/2 (the two halves of the last axis): rotate_half(x) = cat([-x2, x1]). Both are valid RoPE, but a checkpoint is trained with one of them, and the other scrambles its queries and keys."""

import torch


def rope_frequencies(head_dim, max_pos, theta=10000.0):
    if head_dim % 2:
        raise ValueError("head_dim must be even")
    inv_freq = 1.0 / theta ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim)
    angles = torch.outer(torch.arange(max_pos, dtype=torch.float32), inv_freq)
    emb = torch.cat([angles, angles], dim=-1)
    return emb.cos(), emb.sin()


def apply_rope(x, cos, sin, positions):
    rot = cos.shape[-1]
    half = rot // 2
    c = cos[positions][..., :half].float().unsqueeze(-2)
    s = sin[positions][..., :half].float().unsqueeze(-2)
    xf = x.float()
    even, odd = xf[..., 0:rot:2], xf[..., 1:rot:2]
    y_even = even * c - odd * s
    y_odd = odd * c + even * s
    y = torch.stack([y_even, y_odd], dim=-1).flatten(-2)
    return torch.cat([y, xf[..., rot:]], dim=-1).to(x.dtype)
