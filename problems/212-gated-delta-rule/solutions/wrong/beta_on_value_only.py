"""β 只乘在了 v 上：你算的是 S + β·k vᵀ − k (Sᵀk)ᵀ，旧记忆 Sᵀk 被整个减掉。β 是写入强度，
要乘在整个修正量上：S ← S + k (β (v − Sᵀk))ᵀ。β 接近 0 时应该几乎什么都不写，而你的版本会把这个键上的记忆清空。
β multiplies v only: you compute S + β·k vᵀ − k (Sᵀk)ᵀ, which removes the old memory Sᵀk in full.
β is the write strength and scales the whole correction: S ← S + k (β (v − Sᵀk))ᵀ. With β near 0
almost nothing should be written; your version erases whatever the memory held for that key."""

import torch


def _l2norm(x, eps=1e-6):
    return x * torch.rsqrt((x * x).sum(-1, keepdim=True) + eps)


def gated_delta_rule(q, k, v, g, beta, initial_state=None):
    B, H, T, dk = k.shape
    dv = v.shape[-1]
    out_dtype = v.dtype
    q = _l2norm(q.float()) * dk**-0.5
    k = _l2norm(k.float())
    v, g, beta = v.float(), g.float(), beta.float()
    S = torch.zeros(B, H, dk, dv) if initial_state is None else initial_state.float().clone()
    outs = []
    for t in range(T):
        k_t = k[:, :, t]
        S = S * g[:, :, t].exp()[..., None, None]
        recalled = torch.einsum("bhkv,bhk->bhv", S, k_t)
        delta = beta[:, :, t, None] * v[:, :, t] - recalled
        S = S + k_t[..., :, None] * delta[..., None, :]
        outs.append(torch.einsum("bhkv,bhk->bhv", S, q[:, :, t]))
    o = torch.stack(outs, dim=2) if outs else v.new_zeros(B, H, 0, dv)
    return o.to(out_dtype), S
