"""你的输出停在了 fp32：对 bf16 输入，中间量用 fp32 算是对的，但最后要 .to(x.dtype) 转回输入的 dtype。否则后面的注意力会在 fp32 里算，显存和速度都不对，dtype 检查也过不了。
Your output stays in fp32: computing in fp32 is right for a bf16 input, but convert back with .to(x.dtype) at the end. Otherwise the attention that follows runs in fp32, costing memory and time, and the dtype check fails."""

import torch


def rope_frequencies(head_dim, max_pos, theta=10000.0):
    if head_dim % 2:
        raise ValueError("head_dim must be even")
    inv_freq = 1.0 / theta ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim)
    angles = torch.outer(torch.arange(max_pos, dtype=torch.float32), inv_freq)
    emb = torch.cat([angles, angles], dim=-1)
    return emb.cos(), emb.sin()


def apply_rope(x, cos, sin, positions):
    c = cos[positions].float().unsqueeze(-2)
    s = sin[positions].float().unsqueeze(-2)
    rot = c.shape[-1]
    xf = x.float()
    x1, x2 = xf[..., : rot // 2], xf[..., rot // 2 : rot]
    return torch.cat([xf[..., :rot] * c + torch.cat([-x2, x1], dim=-1) * s, xf[..., rot:]], dim=-1)
