"""你的角度是在 bf16 里算的（例如 inv_freq 或位置被转成了 bf16，常见于把整个模型 .to(bfloat16) 之后）。bf16 只有 8 位有效二进制位（约 2～3 位十进制有效数字）：位置 30000 附近相邻两个 bf16 数相差 128，角度会错上好几弧度，cos/sin 就完全不对了。位置、inv_freq 和角度都要用 fp32，最后才把结果转成输入的 dtype。
Your angles are computed in bf16 (for example inv_freq or the positions were cast to bf16, as happens after model.to(torch.bfloat16)). bf16 keeps 8 significant bits: near position 30000 neighbouring bf16 values are 128 apart, so angles are off by whole radians and cos/sin are meaningless. Keep positions, inv_freq and angles in fp32; only the final output takes the input's dtype."""

import torch


def rope_frequencies(head_dim, max_pos, theta=10000.0):
    if head_dim % 2:
        raise ValueError("head_dim must be even")
    inv_freq = 1.0 / theta ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim)
    inv_freq = inv_freq.to(torch.bfloat16)  # what model.to(bfloat16) does to an inv_freq buffer
    angles = torch.outer(torch.arange(max_pos, dtype=torch.bfloat16), inv_freq)
    emb = torch.cat([angles, angles], dim=-1)
    return emb.cos().float(), emb.sin().float()


def apply_rope(x, cos, sin, positions):
    c = cos[positions].float().unsqueeze(-2)
    s = sin[positions].float().unsqueeze(-2)
    rot = c.shape[-1]
    xf = x.float()
    x1, x2 = xf[..., : rot // 2], xf[..., rot // 2 : rot]
    out = torch.cat([xf[..., :rot] * c + torch.cat([-x2, x1], dim=-1) * s, xf[..., rot:]], dim=-1)
    return out.to(x.dtype)
