"""q 和 k 没有做 L2 归一化。delta 规则假定 |k| = 1：写入后 Sᵀk 恰好朝 v 移动 β 的比例；|k| ≠ 1 时
这一步会过冲甚至发散。先沿 d_k 归一化：x / sqrt(Σx² + 1e-6)，q 和 k 都要，然后 q 再乘 1/sqrt(d_k)。
q and k are not L2-normalised. The delta rule assumes |k| = 1: after a write, Sᵀk moves exactly a
fraction β of the way to v; with |k| ≠ 1 the step overshoots and can diverge. Normalise over d_k
first, x / sqrt(Σx² + 1e-6), both q and k, then scale q by 1/sqrt(d_k)."""

import torch


def _l2norm(x, eps=1e-6):
    return x * torch.rsqrt((x * x).sum(-1, keepdim=True) + eps)


def gated_delta_rule(q, k, v, g, beta, initial_state=None):
    B, H, T, dk = k.shape
    dv = v.shape[-1]
    out_dtype = v.dtype
    q = q.float() * dk**-0.5
    k = k.float()
    v, g, beta = v.float(), g.float(), beta.float()
    S = torch.zeros(B, H, dk, dv) if initial_state is None else initial_state.float().clone()
    outs = []
    for t in range(T):
        k_t = k[:, :, t]
        S = S * g[:, :, t].exp()[..., None, None]
        recalled = torch.einsum("bhkv,bhk->bhv", S, k_t)
        delta = beta[:, :, t, None] * (v[:, :, t] - recalled)
        S = S + k_t[..., :, None] * delta[..., None, :]
        outs.append(torch.einsum("bhkv,bhk->bhv", S, q[:, :, t]))
    o = torch.stack(outs, dim=2) if outs else v.new_zeros(B, H, 0, dv)
    return o.to(out_dtype), S
