"""Reference for problem 212: the gated delta rule, one time step after another."""

import torch


def _l2norm(x: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    return x * torch.rsqrt((x * x).sum(dim=-1, keepdim=True) + eps)


def gated_delta_rule(q, k, v, g, beta, initial_state=None):
    batch, heads, seq, d_k = k.shape
    d_v = v.shape[-1]
    out_dtype = v.dtype
    # Everything in fp32: the state is a running sum over the whole sequence.
    q = _l2norm(q.float()) * d_k**-0.5
    k = _l2norm(k.float())
    v, g, beta = v.float(), g.float(), beta.float()
    # A copy: the caller's initial_state is never written.
    state = q.new_zeros(batch, heads, d_k, d_v) if initial_state is None else initial_state.float().clone()
    outputs = []
    for t in range(seq):
        k_t = k[:, :, t]  # (B, H, d_k)
        # 1. forget: S <- exp(g_t) S
        state = state * g[:, :, t].exp()[..., None, None]
        # 2. what the memory currently returns for k_t: S^T k_t, shape (B, H, d_v)
        recalled = (state * k_t[..., None]).sum(dim=-2)
        # 3. write the correction, not the raw value: S <- S + k_t (beta_t (v_t - S^T k_t))^T
        correction = beta[:, :, t, None] * (v[:, :, t] - recalled)
        state = state + k_t[..., None] * correction[..., None, :]
        # 4. read with the query from the updated memory: o_t = S^T q_t
        outputs.append((state * q[:, :, t, :, None]).sum(dim=-2))
    # An empty sequence (seq = 0) reads nothing: an empty output, and the state as it came in.
    # torch.stack refuses an empty list, so that output is built by hand.
    o = torch.stack(outputs, dim=2) if outputs else v.new_zeros(batch, heads, 0, d_v)  # (B, H, T, d_v)
    return o.to(out_dtype), state
