"""The state update in matrix form with einsum; vector_norm for the L2 norm, the scale folded into q."""

import math

import torch


def _normalize(x, eps=1e-6):
    return x / torch.sqrt(torch.linalg.vector_norm(x, dim=-1, keepdim=True) ** 2 + eps)


def gated_delta_rule(q, k, v, g, beta, initial_state=None):
    b, h, t, dk = q.shape
    dv = v.shape[-1]
    q = _normalize(q.to(torch.float32)) / math.sqrt(dk)
    k = _normalize(k.to(torch.float32))
    vf = v.to(torch.float32)
    decay = torch.exp(g.to(torch.float32))
    bf = beta.to(torch.float32)
    S = torch.zeros(b, h, dk, dv) if initial_state is None else initial_state.to(torch.float32)
    out = torch.empty(b, h, t, dv)
    for i in range(t):
        S = decay[:, :, i, None, None] * S
        err = vf[:, :, i] - torch.einsum("bhkv,bhk->bhv", S, k[:, :, i])
        S = S + torch.einsum("bhk,bhv->bhkv", k[:, :, i], bf[:, :, i, None] * err)
        out[:, :, i] = torch.einsum("bhkv,bhk->bhv", S, q[:, :, i])
    return out.to(v.dtype), S
