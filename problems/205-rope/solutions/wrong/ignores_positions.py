"""你没有用 positions，而是默认位置总是 0, 1, ..., seq-1（取了 cos[:seq]）。在 KV cache 的解码步里，新 token 的位置是前面已有的长度，不从 0 开始；一个 batch 里的每条序列也可能各在不同位置。请用 cos[positions] 按位置取行。
You ignore `positions` and assume the tokens sit at 0, 1, ..., seq-1 (you take cos[:seq]). In a KV-cache decode step the new token's position is the length already cached, not 0, and each sequence in a batch may be at a different position. Gather the rows with cos[positions]."""

import torch


def rope_frequencies(head_dim, max_pos, theta=10000.0):
    if head_dim % 2:
        raise ValueError("head_dim must be even")
    inv_freq = 1.0 / theta ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim)
    angles = torch.outer(torch.arange(max_pos, dtype=torch.float32), inv_freq)
    emb = torch.cat([angles, angles], dim=-1)
    return emb.cos(), emb.sin()


def apply_rope(x, cos, sin, positions):
    seq = x.shape[1]
    c = cos[:seq].float().unsqueeze(-2)
    s = sin[:seq].float().unsqueeze(-2)
    rot = c.shape[-1]
    xf = x.float()
    x1, x2 = xf[..., : rot // 2], xf[..., rot // 2 : rot]
    out = torch.cat([xf[..., :rot] * c + torch.cat([-x2, x1], dim=-1) * s, xf[..., rot:]], dim=-1)
    return out.to(x.dtype)
