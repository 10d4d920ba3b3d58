"""Accepted: every angle and product in float64, rounded once at the end (more precise than needed)."""

import torch


def rope_frequencies(head_dim, max_pos, theta=10000.0):
    if head_dim % 2:
        raise ValueError("head_dim must be even")
    inv_freq = 1.0 / theta ** (torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)
    angles = torch.arange(max_pos, dtype=torch.float64)[:, None] * inv_freq
    emb = torch.cat([angles, angles], dim=-1)
    return emb.cos().float(), emb.sin().float()


def apply_rope(x, cos, sin, positions):
    rot = cos.shape[-1]
    half = rot // 2
    c = cos[positions].double()[..., None, :]
    s = sin[positions].double()[..., None, :]
    xd = x.double()
    xr = xd[..., :rot]
    swapped = torch.cat([-xr[..., half:], xr[..., :half]], dim=-1)
    return torch.cat([xr * c + swapped * s, xd[..., rot:]], dim=-1).to(x.dtype)
