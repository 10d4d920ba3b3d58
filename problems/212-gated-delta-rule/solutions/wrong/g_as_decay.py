"""g 是衰减的对数，不是衰减本身：记忆要乘 exp(g_t)（g ≤ 0，所以在 (0, 1] 之间），你直接乘了 g。
g 是负数时，状态每一步都变号，g 接近 0 时记忆几乎被清空——正好和"g = 0 表示完全不遗忘"相反。
g is the log of the decay, not the decay itself: multiply the memory by exp(g_t) (in (0, 1], since
g ≤ 0); you multiplied by g. With negative g the state flips sign every step, and g near 0 wipes the
memory, the opposite of "g = 0 means forget nothing"."""

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
        S = S * g[:, :, t][..., None, None]
        recalled = torch.einsum("bhkv,bhk->bhv", S, k_t)
        delta = beta[:, :, t, None] * (v[:, :, t] - recalled)
        S = S + k_t[..., :, None] * delta[..., None, :]
        outs.append(torch.einsum("bhkv,bhk->bhv", S, q[:, :, t]))
    o = torch.stack(outs, dim=2) if outs else v.new_zeros(B, H, 0, dv)
    return o.to(out_dtype), S
