"""inv_freq 的指数不对：你用了 θ^(-i/d)（i = 0, 1, ..., d/2-1），少了因子 2。正确的是 θ^(-2i/d)，也就是 arange(0, d, 2) / d，这样频率从 1 一直降到接近 1/θ；少了 2，最慢的频率只降到 1/√θ，长距离的位置就分辨不清了。
The exponent of inv_freq is wrong: you use θ^(-i/d) for i = 0, 1, ..., d/2-1, missing the factor 2. It is θ^(-2i/d), that is arange(0, d, 2) / d, so the frequencies fall from 1 to nearly 1/θ; without the 2 the slowest one stops at 1/√θ and long distances blur together."""

import torch


def rope_frequencies(head_dim, max_pos, theta=10000.0):
    if head_dim % 2:
        raise ValueError("head_dim must be even")
    inv_freq = 1.0 / theta ** (torch.arange(head_dim // 2, dtype=torch.float32) / head_dim)
    angles = torch.outer(torch.arange(max_pos, dtype=torch.float32), inv_freq)
    emb = torch.cat([angles, angles], dim=-1)
    return emb.cos(), emb.sin()


def apply_rope(x, cos, sin, positions):
    c = cos[positions].float().unsqueeze(-2)
    s = sin[positions].float().unsqueeze(-2)
    rot = c.shape[-1]
    xf = x.float()
    x1, x2 = xf[..., : rot // 2], xf[..., rot // 2 : rot]
    out = torch.cat([xf[..., :rot] * c + torch.cat([-x2, x1], dim=-1) * s, xf[..., rot:]], dim=-1)
    return out.to(x.dtype)
