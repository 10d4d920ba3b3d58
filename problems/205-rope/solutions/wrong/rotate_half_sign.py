"""rotate_half 的符号放错了：你写成了 cat([x2, -x1])，应为 cat([-x2, x1])。符号反了，每一对特征就朝相反方向转，等于把角度取负；输出形状没问题，数值却不对。
The sign in rotate_half is on the wrong half: you wrote cat([x2, -x1]) instead of cat([-x2, x1]). That turns every pair the other way, as if the angles were negated: the shape is right, the values are not."""

import torch


def rope_frequencies(head_dim, max_pos, theta=10000.0):
    if head_dim % 2:
        raise ValueError("head_dim must be even")
    inv_freq = 1.0 / theta ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim)
    angles = torch.outer(torch.arange(max_pos, dtype=torch.float32), inv_freq)
    emb = torch.cat([angles, angles], dim=-1)
    return emb.cos(), emb.sin()


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat([x2, -x1], dim=-1)


def apply_rope(x, cos, sin, positions):
    c = cos[positions].float().unsqueeze(-2)
    s = sin[positions].float().unsqueeze(-2)
    rot = c.shape[-1]
    xf = x.float()
    out = torch.cat([xf[..., :rot] * c + rotate_half(xf[..., :rot]) * s, xf[..., rot:]], dim=-1)
    return out.to(x.dtype)
