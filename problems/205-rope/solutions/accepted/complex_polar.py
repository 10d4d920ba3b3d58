"""Accepted: the rotation as complex multiplication, (x1 + i x2) * e^{i angle}, on the half-split pairs."""

import torch


def rope_frequencies(head_dim, max_pos, theta=10000.0):
    if head_dim % 2 != 0:
        raise ValueError(f"head_dim must be even, got {head_dim}")
    half = head_dim // 2
    # theta^(-2i/d) written as one power with a negative exponent.
    inv_freq = torch.pow(
        torch.tensor(theta, dtype=torch.float32), -2.0 * torch.arange(half, dtype=torch.float32) / head_dim
    )
    angles = torch.arange(max_pos, dtype=torch.float32)[:, None] * inv_freq[None, :]
    unit = torch.polar(torch.ones_like(angles), angles)  # cos + i sin
    return torch.cat([unit.real, unit.real], dim=-1), torch.cat([unit.imag, unit.imag], dim=-1)


def apply_rope(x, cos, sin, positions):
    rot = cos.shape[-1]
    half = rot // 2
    # Both halves of a row hold the same angles, so the first half is enough.
    unit = torch.complex(cos[positions][..., :half].float(), sin[positions][..., :half].float()).unsqueeze(-2)
    xf = x.float()
    # Feature i pairs with feature i + half: stack them as (real, imag) and view as complex.
    pairs = torch.stack([xf[..., :half], xf[..., half:rot]], dim=-1).contiguous()
    turned = torch.view_as_complex(pairs) * unit
    out = torch.cat([turned.real, turned.imag, xf[..., rot:]], dim=-1)
    return out.to(x.dtype)
