"""The chunkwise-parallel form that production kernels use for prefill (as in the transformers
library's torch fallback for Qwen3-Next): inside a chunk, the sequential updates are folded into
one lower-triangular system (the WY representation); only the state crosses chunk boundaries.
Its rounding differs from the step-by-step loop, so it sets how loose the tolerances must be."""

import torch

CHUNK = 4


def _l2(x):
    return x * torch.rsqrt((x * x).sum(-1, keepdim=True) + 1e-6)


def gated_delta_rule(q, k, v, g, beta, initial_state=None):
    B, H, T, Dk = k.shape
    Dv = v.shape[-1]
    C = CHUNK
    out_dtype = v.dtype
    if T == 0:  # nothing to chunk (reshape cannot infer a chunk count from an empty tensor)
        S = torch.zeros(B, H, Dk, Dv) if initial_state is None else initial_state.float()
        return v.new_zeros(B, H, 0, Dv), S
    q = _l2(q.float()) * Dk**-0.5
    k = _l2(k.float())
    v, g, beta = v.float(), g.float(), beta.float()
    pad = (C - T % C) % C
    # Padded steps have k = 0 and beta = 0, g = 0: they leave the state alone.
    q, k, v = (torch.nn.functional.pad(x, (0, 0, 0, pad)) for x in (q, k, v))
    g, beta = (torch.nn.functional.pad(x, (0, pad)) for x in (g, beta))
    n = (T + pad) // C
    q, k, v = (x.reshape(B, H, n, C, -1) for x in (q, k, v))
    g, beta = g.reshape(B, H, n, C).cumsum(-1), beta.reshape(B, H, n, C)
    k_beta, v_beta = k * beta[..., None], v * beta[..., None]

    # decay[i, j] = exp(G_i - G_j) for j <= i (within a chunk), 0 above the diagonal
    diff = g[..., :, None] - g[..., None, :]
    lower = torch.ones(C, C, dtype=torch.bool).tril()
    decay = torch.where(lower, diff, torch.zeros_like(diff)).exp() * lower
    # Solve (I + A) W = ... for A = strictly lower (beta_i exp(G_i - G_j) k_i . k_j) by forward substitution.
    a = -(k_beta @ k.transpose(-1, -2)) * decay * torch.ones(C, C).tril(-1)
    rows = [a[..., 0, :]]
    for i in range(1, C):
        rows.append(a[..., i, :] + (a[..., i, :i, None] * torch.stack(rows, -2)[..., :i, :]).sum(-2))
    t_mat = torch.stack(rows, -2) + torch.eye(C)
    u = t_mat @ v_beta  # (B, H, n, C, Dv)
    w = t_mat @ (k_beta * g.exp()[..., None])  # (B, H, n, C, Dk)

    S = torch.zeros(B, H, Dk, Dv) if initial_state is None else initial_state.float()
    outs = []
    for i in range(n):
        qi, ki, gi = q[:, :, i], k[:, :, i], g[:, :, i]
        new_v = u[:, :, i] - w[:, :, i] @ S
        intra = (qi @ ki.transpose(-1, -2)) * decay[:, :, i]
        outs.append((qi * gi.exp()[..., None]) @ S + intra @ new_v)
        S = (
            S * gi[..., -1, None, None].exp()
            + (ki * (gi[..., -1, None] - gi).exp()[..., None]).transpose(-1, -2) @ new_v
        )
    o = torch.cat(outs, dim=2)[:, :, :T]
    return o.to(out_dtype), S
