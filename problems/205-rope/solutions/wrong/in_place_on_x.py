"""你把旋转后的结果写回了 x 的切片里。对 fp32 的输入，x.float() 返回的就是 x 本身而不是副本，所以调用者的 q、k 被悄悄改掉了：之后再用它们（例如换一组位置再旋转一次）就会出错，对需要梯度的叶子张量还会直接报错。先把结果算进新的张量（torch.cat([...])），不要对输入做原地赋值。
You write the rotated values back into slices of x. For an fp32 input, x.float() returns x itself, not a copy, so the caller's q and k are silently changed: anything that uses them again (rotating them once more at other positions, say) goes wrong, and a leaf tensor that requires grad raises an error. Build the result in a new tensor (torch.cat([...])) instead of assigning into the input."""

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
    half = rot // 2
    xf = x.float()  # for fp32 x this is the caller's tensor
    x1 = xf[..., :half].clone()
    x2 = xf[..., half:rot].clone()
    xf[..., :half] = x1 * c[..., :half] - x2 * s[..., :half]
    xf[..., half:rot] = x2 * c[..., half:] + x1 * s[..., half:]
    return xf.to(x.dtype)
