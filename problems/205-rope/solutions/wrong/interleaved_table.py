"""你的 cos/sin 表用 repeat_interleave 把每个角度重复了两次（[a0, a0, a1, a1, ...]），这是交错配对的表。本题按前后两半配对，表应为 cat([angles, angles])，即 [a0, a1, ..., a0, a1, ...]，特征 i 与 i + d/2 用同一个角度。
Your cos/sin table repeats each angle twice in place ([a0, a0, a1, a1, ...]) with repeat_interleave: the table for interleaved pairs. This problem pairs the two halves, so the table is cat([angles, angles]) = [a0, a1, ..., a0, a1, ...]: feature i and feature i + d/2 share an angle."""

import torch


def rope_frequencies(head_dim, max_pos, theta=10000.0):
    if head_dim % 2:
        raise ValueError("head_dim must be even")
    inv_freq = 1.0 / theta ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim)
    angles = torch.outer(torch.arange(max_pos, dtype=torch.float32), inv_freq)
    emb = angles.repeat_interleave(2, dim=-1)
    return emb.cos(), emb.sin()


def apply_rope(x, cos, sin, positions):
    c = cos[positions].float().unsqueeze(-2)
    s = sin[positions].float().unsqueeze(-2)
    rot = c.shape[-1]
    xf = x.float()
    x1, x2 = xf[..., : rot // 2], xf[..., rot // 2 : rot]
    out = torch.cat([xf[..., :rot] * c + torch.cat([-x2, x1], dim=-1) * s, xf[..., rot:]], dim=-1)
    return out.to(x.dtype)
