"""Accepted: the Hugging Face transformers style (a rotary-embedding helper and apply_rotary_pos_emb)."""

import torch


def _compute_default_rope_parameters(dim, base):
    # transformers builds inv_freq from an int64 arange cast to float, then divides by dim.
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).to(dtype=torch.float) / dim))
    return inv_freq.float()


def rope_frequencies(head_dim, max_pos, theta=10000.0):
    inv_freq = _compute_default_rope_parameters(head_dim, theta)
    position_ids = torch.arange(max_pos, dtype=torch.int64)
    # (dim/2, 1) @ (1, max_pos), as the rotary embedding's forward does, then transposed.
    inv_freq_expanded = inv_freq[:, None].float()
    position_ids_expanded = position_ids[None, :].float()
    freqs = (inv_freq_expanded @ position_ids_expanded).transpose(0, 1)
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos().to(torch.float32), emb.sin().to(torch.float32)


def rotate_half(x):
    """Rotates half the hidden dims of the input."""
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary_pos_emb(q, cos, sin, unsqueeze_dim=1):
    # cos and sin are (..., seq, rotary_dim); unsqueeze_dim is where the heads axis goes.
    cos = cos.unsqueeze(unsqueeze_dim)
    sin = sin.unsqueeze(unsqueeze_dim)
    rotary_dim = cos.shape[-1]
    q_rot, q_pass = q[..., :rotary_dim], q[..., rotary_dim:]
    q_embed = (q_rot * cos) + (rotate_half(q_rot) * sin)
    return torch.cat([q_embed, q_pass], dim=-1)


def apply_rope(x, cos, sin, positions):
    # Our layout is (batch, seq, heads, head_dim): the heads axis comes right after seq, so the
    # gathered (..., seq, rotary_dim) rows are unsqueezed at -2.
    position_cos = cos[positions].float()
    position_sin = sin[positions].float()
    out = apply_rotary_pos_emb(x.float(), position_cos, position_sin, unsqueeze_dim=-2)
    return out.to(x.dtype)
