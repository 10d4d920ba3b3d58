"""Every step in float64, rounded once at the end (more precise than the problem asks)."""

import torch


def gated_delta_rule(q, k, v, g, beta, initial_state=None):
    B, H, T, Dk = q.shape
    q64, k64, v64 = q.double(), k.double(), v.double()
    q64 = q64 / torch.sqrt((q64 * q64).sum(-1, keepdim=True) + 1e-6) / Dk**0.5
    k64 = k64 / torch.sqrt((k64 * k64).sum(-1, keepdim=True) + 1e-6)
    S = torch.zeros(B, H, Dk, v.shape[-1], dtype=torch.float64)
    if initial_state is not None:
        S = S + initial_state.double()
    ys = []
    for t in range(T):
        S = S * g[:, :, t].double().exp()[:, :, None, None]
        kt = k64[:, :, t, :, None]  # column vectors
        delta = beta[:, :, t].double()[:, :, None, None] * (v64[:, :, t, None, :] - kt.transpose(-1, -2) @ S)
        S = S + kt @ delta
        ys.append((q64[:, :, t, None, :] @ S)[:, :, 0])
    o = torch.stack(ys, 2) if ys else v64.new_zeros(B, H, 0, v.shape[-1])
    return o.to(v.dtype), S.float()
