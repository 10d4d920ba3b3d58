"""An explicit loop over batch and heads with 2-D matrices, and the update rewritten as
S_t = exp(g_t) (I - beta_t k_t k_t^T) S_{t-1} + beta_t k_t v_t^T (the same rule, expanded)."""

import torch


def _unit(x):
    return x * torch.rsqrt(x.pow(2).sum(-1, keepdim=True) + 1e-6)


def gated_delta_rule(q, k, v, g, beta, initial_state=None):
    B, H, T, Dk = k.shape
    Dv = v.shape[-1]
    qn = _unit(q.float()) * (1.0 / Dk**0.5)
    kn = _unit(k.float())
    outs, states = [], []
    for b in range(B):
        for h in range(H):
            S = torch.zeros(Dk, Dv) if initial_state is None else initial_state[b, h].float()
            rows = []
            for t in range(T):
                kt = kn[b, h, t].unsqueeze(1)  # (Dk, 1)
                bt = beta[b, h, t].float()
                vt = v[b, h, t].float().unsqueeze(0)  # (1, Dv)
                S = torch.exp(g[b, h, t].float()) * (S - bt * kt @ (kt.T @ S)) + bt * kt @ vt
                rows.append(S.T @ qn[b, h, t])
            outs.append(torch.stack(rows) if rows else qn.new_zeros(0, Dv))
            states.append(S)
    o = torch.stack(outs).reshape(B, H, T, Dv)
    return o.to(v.dtype), torch.stack(states).reshape(B, H, Dk, Dv)
