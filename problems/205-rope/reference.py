"""Reference for problem 205: rotary position embedding, half-split (Qwen / Llama) convention."""

import torch


def rope_frequencies(
    head_dim: int, max_pos: int, theta: float = 10000.0
) -> tuple[torch.Tensor, torch.Tensor]:
    # Features turn in pairs, so head_dim is even in every model; an odd one is not checked: its
    # table comes out one column wider, and apply_rope then fails on the shapes.
    # Everything in fp32: an angle of 30000 needs fp32's 24 bits; bf16 would be off by whole radians.
    exponents = torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim
    inv_freq = 1.0 / theta**exponents
    angles = torch.outer(torch.arange(max_pos, dtype=torch.float32), inv_freq)
    # Feature i and feature i + head_dim/2 form a pair, so both halves use the same angles.
    emb = torch.cat([angles, angles], dim=-1)
    return emb.cos(), emb.sin()


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat([-x2, x1], dim=-1)


def apply_rope(
    x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, positions: torch.Tensor
) -> torch.Tensor:
    # x: (batch, seq, heads, head_dim); positions: (seq,) or (batch, seq).
    # The gathered rows get a heads axis of size 1 so that every head uses the same angles.
    c = cos[positions].float().unsqueeze(-2)
    s = sin[positions].float().unsqueeze(-2)
    rot = c.shape[-1]  # a narrower table rotates only the first `rot` features (partial rotary)
    xf = x.float()
    x_rot, x_pass = xf[..., :rot], xf[..., rot:]
    out = torch.cat([x_rot * c + rotate_half(x_rot) * s, x_pass], dim=-1)
    return out.to(x.dtype)
