"""你在 bf16 里做了乘加：把 cos/sin 转成了 x 的 dtype，x*cos + rotate_half(x)*sin 的每一步都舍入到 bf16。单看误差只有一两个 ulp，但本题要求先转 fp32 计算、最后舍入一次（Qwen 的实现也是这样）。
You multiply and add in bf16: cos/sin are cast to x's dtype and every step of x*cos + rotate_half(x)*sin is rounded to bf16. Each error is only an ulp or two, but this problem asks for the arithmetic in fp32 with one rounding at the end."""

import torch


def rope_frequencies(head_dim, max_pos, theta=10000.0):
    if head_dim % 2:
        raise ValueError("head_dim must be even")
    inv_freq = 1.0 / theta ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim)
    angles = torch.outer(torch.arange(max_pos, dtype=torch.float32), inv_freq)
    emb = torch.cat([angles, angles], dim=-1)
    return emb.cos(), emb.sin()


def apply_rope(x, cos, sin, positions):
    c = cos[positions].to(x.dtype).unsqueeze(-2)
    s = sin[positions].to(x.dtype).unsqueeze(-2)
    rot = c.shape[-1]
    x1, x2 = x[..., : rot // 2], x[..., rot // 2 : rot]
    return torch.cat([x[..., :rot] * c + torch.cat([-x2, x1], dim=-1) * s, x[..., rot:]], dim=-1)
