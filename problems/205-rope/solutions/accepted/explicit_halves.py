"""Accepted: inv_freq through exp(-log(theta) * 2i/d) and the rotation written out on x1 and x2."""

import math

import torch


def rope_frequencies(head_dim, max_pos, theta=10000.0):
    half, odd = divmod(head_dim, 2)
    if odd:
        raise ValueError("head_dim must be even")
    i = torch.arange(half, dtype=torch.float32)
    inv_freq = torch.exp(-math.log(theta) * (2.0 * i / head_dim))
    pos = torch.arange(max_pos, dtype=torch.float32)
    angles = pos.unsqueeze(1) * inv_freq.unsqueeze(0)
    angles = angles.repeat(1, 2)  # [a, a]: the same angles for both halves
    return torch.cos(angles), torch.sin(angles)


def apply_rope(x, cos, sin, positions):
    rot = cos.shape[-1]
    half = rot // 2
    c = cos.index_select(0, positions.reshape(-1)).reshape(*positions.shape, 1, rot).float()
    s = sin.index_select(0, positions.reshape(-1)).reshape(*positions.shape, 1, rot).float()
    xf = x.float()
    x1, x2, rest = xf[..., :half], xf[..., half:rot], xf[..., rot:]
    y1 = x1 * c[..., :half] - x2 * s[..., :half]
    y2 = x2 * c[..., half:] + x1 * s[..., half:]
    return torch.cat([y1, y2, rest], dim=-1).to(x.dtype)
