"""In the style of flash-linear-attention's naive recurrent reference: the tensors go to FLA's
time-major layout (batch, seq, heads, dim) and back, q and k are L2-normalised "in the kernel",
the hidden state `h` is updated block by block with `b_` names, and the output is written into a
preallocated buffer one step at a time."""

import torch


def l2norm_fwd(x: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    # FLA's l2norm: x * rsqrt(sum(x^2) + eps) over the last axis.
    return x * torch.rsqrt(x.pow(2).sum(-1, keepdim=True) + eps)


def naive_recurrent_gated_delta_rule(q, k, v, beta, g, scale=None, initial_state=None, use_qk_l2norm=True):
    """q, k: (B, T, H, K); v: (B, T, H, V); beta, g: (B, T, H). Returns o (B, T, H, V) in fp32
    and the final state (B, H, K, V) in fp32."""
    B, T, H, K = k.shape
    V = v.shape[-1]
    q, k, v, beta, g = (x.to(torch.float32) for x in (q, k, v, beta, g))
    if use_qk_l2norm:
        q, k = l2norm_fwd(q), l2norm_fwd(k)
    if scale is None:
        scale = K**-0.5
    q = q * scale
    o = torch.zeros(B, T, H, V, dtype=torch.float32)
    h = torch.zeros(B, H, K, V, dtype=torch.float32)
    if initial_state is not None:
        h = h + initial_state.to(torch.float32)  # a new tensor: the caller's state is never written
    for i in range(T):
        b_q, b_k, b_v = q[:, i], k[:, i], v[:, i]  # (B, H, K), (B, H, K), (B, H, V)
        b_beta, b_g = beta[:, i], g[:, i]  # (B, H)
        h = h * b_g.exp()[..., None, None]
        b_v = b_v - torch.einsum("bhkv,bhk->bhv", h, b_k)
        b_v = b_v * b_beta[..., None]
        h = h + torch.einsum("bhk,bhv->bhkv", b_k, b_v)
        o[:, i] = torch.einsum("bhk,bhkv->bhv", b_q, h)
    return o, h


def gated_delta_rule(q, k, v, g, beta, initial_state=None):
    # Our layout is head-first (B, H, T, D); FLA's is (B, T, H, D).
    o, h = naive_recurrent_gated_delta_rule(
        q.transpose(1, 2),
        k.transpose(1, 2),
        v.transpose(1, 2),
        beta.transpose(1, 2),
        g.transpose(1, 2),
        initial_state=initial_state,
    )
    return o.transpose(1, 2).to(v.dtype), h
