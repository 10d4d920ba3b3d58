"""你的状态按 (d_v, d_k) 存放：内部自洽，但 final_state 和 initial_state 的布局与约定相反。
状态的形状是 (batch, heads, d_k, d_v)：读出是 Sᵀk、Sᵀq，写入是 k ⊗ δ（外积，k 在前）。
d_k ≠ d_v 时形状直接对不上；d_k = d_v 时形状碰巧一样，但传进来和传出去的状态都被转置了，分段计算时接不上。
Your state is laid out as (d_v, d_k): consistent inside, but final_state and initial_state use the
opposite layout from the convention. The state is (batch, heads, d_k, d_v): reads are Sᵀk and Sᵀq,
writes are k ⊗ δ (outer product, k first). With d_k ≠ d_v the shapes do not even match; with
d_k = d_v they happen to, but the state you take in and hand back is transposed, so chunks do not join."""

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
    S = torch.zeros(B, H, dv, dk) if initial_state is None else initial_state.float().clone()
    outs = []
    for t in range(T):
        k_t = k[:, :, t]
        S = S * g[:, :, t].exp()[..., None, None]
        recalled = torch.einsum("bhvk,bhk->bhv", S, k_t)
        delta = beta[:, :, t, None] * (v[:, :, t] - recalled)
        S = S + delta[..., :, None] * k_t[..., None, :]
        outs.append(torch.einsum("bhvk,bhk->bhv", S, q[:, :, t]))
    o = torch.stack(outs, dim=2) if outs else v.new_zeros(B, H, 0, dv)
    return o.to(out_dtype), S
