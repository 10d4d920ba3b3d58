"""你在更新之前就读出了输出：o_t = S_{t-1}ᵀ q_t，用的是上一步的记忆，第 t 个 token 自己的 k_t、v_t 还没写进去
（第一步的输出因此总是 0 或只来自初始状态）。每一步要先遗忘、再写入，最后用更新后的 S_t 读出 o_t = S_tᵀ q_t。
You read the output before the update: o_t = S_{t-1}ᵀ q_t uses the previous step's memory, without
token t's own k_t and v_t (so the first output is always zero, or comes from the initial state
alone). At each step forget, then write, and only then read from the updated state: o_t = S_tᵀ q_t."""

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
        outs.append(torch.einsum("bhkv,bhk->bhv", S, q[:, :, t]))
        S = S * g[:, :, t].exp()[..., None, None]
        recalled = torch.einsum("bhkv,bhk->bhv", S, k_t)
        delta = beta[:, :, t, None] * (v[:, :, t] - recalled)
        S = S + k_t[..., :, None] * delta[..., None, :]
    o = torch.stack(outs, dim=2) if outs else v.new_zeros(B, H, 0, dv)
    return o.to(out_dtype), S
