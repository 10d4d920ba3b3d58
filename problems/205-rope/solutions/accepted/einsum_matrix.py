"""Accepted: angles by einsum, rotate_half as a fixed signed permutation matrix applied by einsum."""

import torch


def rope_frequencies(head_dim, max_pos, theta=10000.0):
    if head_dim % 2 == 1:
        raise ValueError("an odd head_dim cannot be split into pairs")
    inv_freq = theta ** (-(torch.arange(0, head_dim, 2).float() / head_dim))
    angles = torch.einsum("p,f->pf", torch.arange(max_pos).float(), inv_freq)
    angles = torch.cat((angles, angles), dim=1)
    return angles.cos(), angles.sin()


def apply_rope(x, cos, sin, positions):
    rot = cos.shape[-1]
    half = rot // 2
    # P maps x to rotate_half(x) = [-x2, x1]; its entries are 0 and +-1, so the product is exact.
    p = torch.zeros(rot, rot)
    p[torch.arange(half), torch.arange(half) + half] = -1.0
    p[torch.arange(half) + half, torch.arange(half)] = 1.0
    xf = x.float()
    x_rot = xf[..., :rot]
    turned = torch.einsum("bshd,ed->bshe", x_rot, p)
    c = cos[positions].float()
    s = sin[positions].float()
    if positions.dim() == 1:
        c, s = c.expand(x.shape[0], -1, -1), s.expand(x.shape[0], -1, -1)
    y = torch.einsum("bshd,bsd->bshd", x_rot, c) + torch.einsum("bshd,bsd->bshd", turned, s)
    return torch.cat([y, xf[..., rot:]], dim=-1).to(x.dtype)
