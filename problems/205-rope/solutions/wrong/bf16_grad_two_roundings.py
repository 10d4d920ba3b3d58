"""你没有先把 x 转成 fp32，而是让 bf16 的 x 直接与 fp32 的 cos/sin 相乘。前向没有问题：类型提升让乘加在 fp32 中进行，结果与参考答案逐位相同。但反向传播时，x·cos 与 rotate_half(x)·sin 两条路径各自把梯度舍入到 bf16，再在 bf16 中相加，舍入了两次：约四分之一的梯度元素差 1 ulp，接近 0 的地方相差更大。开头写 xf = x.float()，全部用 xf 计算，梯度就在 fp32 中累加、最后只舍入一次。
You let the bf16 x multiply the fp32 cos/sin directly instead of casting x to fp32 first. The forward pass is fine: type promotion does the multiply and add in fp32, and the result is bit-identical to the reference. But in the backward pass each of the two paths, x·cos and rotate_half(x)·sin, rounds its gradient to bf16 and the two are added in bf16, two roundings: about a quarter of the gradient elements are 1 ulp off, and more near zero. Start with xf = x.float() and compute everything from xf; then the gradient is accumulated in fp32 and rounded once."""

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
    return torch.cat([-x2, x1], dim=-1)


def apply_rope(x, cos, sin, positions):
    c = cos[positions].unsqueeze(-2)  # fp32 rows
    s = sin[positions].unsqueeze(-2)
    rot = c.shape[-1]
    x_rot, x_pass = x[..., :rot], x[..., rot:]  # still bf16: promotion makes the products fp32
    out = torch.cat([x_rot * c + rotate_half(x_rot) * s, x_pass], dim=-1)
    return out.to(x.dtype)
