"""你的 inv_freq 依赖 torch 的默认 dtype：torch.arange(0, head_dim, 2) 是整数张量，除以 head_dim 得到的是"默认 dtype"的浮点数。平时默认是 fp32，看不出问题；但有些加载代码会先 torch.set_default_dtype(torch.bfloat16) 再构建模型，这时 inv_freq 变成 bf16，只有 8 位有效二进制位（约 2～3 位十进制有效数字），长位置的角度全错；默认是 fp64 时，表又变成了 fp64。给每个创建张量的调用写明 dtype=torch.float32（或者整数 arange 之后 .float()），表就与默认 dtype 无关。
Your inv_freq depends on torch's default dtype: torch.arange(0, head_dim, 2) is an integer tensor, and dividing it by head_dim gives a float of the default dtype. That is fp32 most of the time, so nothing shows; but some loading code calls torch.set_default_dtype(torch.bfloat16) before building the model, and then inv_freq is bf16, with 8 significant bits, and angles at long positions are wrong; with an fp64 default the tables come out fp64. Give every tensor factory dtype=torch.float32 (or call .float() on the integer arange) so that the tables do not depend on the default dtype."""

import torch


def rope_frequencies(head_dim, max_pos, theta=10000.0):
    if head_dim % 2:
        raise ValueError("head_dim must be even")
    inv_freq = 1.0 / theta ** (torch.arange(0, head_dim, 2) / head_dim)  # the default dtype, not fp32
    angles = torch.outer(torch.arange(max_pos, dtype=torch.float32), inv_freq)
    emb = torch.cat([angles, angles], dim=-1)
    return emb.cos(), emb.sin()


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat([-x2, x1], dim=-1)


def apply_rope(x, cos, sin, positions):
    c = cos[positions].float().unsqueeze(-2)
    s = sin[positions].float().unsqueeze(-2)
    rot = c.shape[-1]
    xf = x.float()
    out = torch.cat([xf[..., :rot] * c + rotate_half(xf[..., :rot]) * s, xf[..., rot:]], dim=-1)
    return out.to(x.dtype)
