"""你在写入之后才衰减：先算 S + k(β(v − Sᵀk))ᵀ，再乘 exp(g)。这样刚写进去的新值也被衰减了一次，
而且减去的 Sᵀk 用的是还没遗忘的旧记忆。顺序是：先遗忘 S ← exp(g_t)·S，再用遗忘之后的 S 算 Sᵀk_t 并写入修正量。
You decay after writing: you compute S + k(β(v − Sᵀk))ᵀ and then multiply by exp(g). The value
just written is decayed once too, and the Sᵀk you subtract reads the memory before it forgot. The
order is: forget first, S ← exp(g_t)·S, then compute Sᵀk_t from the decayed S and write the correction."""

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
        recalled = torch.einsum("bhkv,bhk->bhv", S, k_t)
        delta = beta[:, :, t, None] * (v[:, :, t] - recalled)
        S = S + k_t[..., :, None] * delta[..., None, :]
        S = S * g[:, :, t].exp()[..., None, None]
        outs.append(torch.einsum("bhkv,bhk->bhv", S, q[:, :, t]))
    o = torch.stack(outs, dim=2) if outs else v.new_zeros(B, H, 0, dv)
    return o.to(out_dtype), S
